module pydpcore

go 1.19
