"""Shared test support: 50-digit mpmath references (mpref), statistical tests at a fixed false-alarm rate
(stats), and data and mechanisms for the columnar-data tests (frames). The tests import it as
``from support import ...`` (tests/conftest.py puts tests/ on sys.path)."""
