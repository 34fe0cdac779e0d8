"""The studies reproduce the papers' figures and check their claims; their scripts import one another."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
