"""``python -m pydp_core ARGS`` is ``pydp-core ARGS``."""
from .cli import main

raise SystemExit(main())
