"""The version of pydp_core: one definition, read by the package, its modules and the build."""

__version__ = "0.1.0"
