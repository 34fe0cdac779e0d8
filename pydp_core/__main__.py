"""`python -m pydp_core` runs the demo (the same as `pydp-core demo`)."""
from .cli import main

raise SystemExit(main(["demo"]))
