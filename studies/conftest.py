"""The studies reproduce the papers' figures and check their claims; their scripts import one another."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.append(str(Path(__file__).resolve().parents[1] / "tests"))

from support.ledgers import _own_key_ledgers  # noqa: E402,F401  (an autouse fixture)
