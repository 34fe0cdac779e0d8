"""Shared test fixtures; puts tests/ on sys.path so that tests import ``support``."""
import os
import sys
from pathlib import Path

import mpmath
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from support.ledgers import _own_key_ledgers  # noqa: E402,F401  (an autouse fixture)


@pytest.fixture(autouse=True)
def _mp_precision():
    """Every test starts with 50-digit mpmath arithmetic (references are computed at this precision)."""
    with mpmath.workdps(50):
        yield


@pytest.fixture(scope="session")
def spark():
    """One local Spark session for the whole run (two cores, up to four task attempts), whose Python workers
    run this interpreter and import the package under test. pyspark is in the test extras: a session that
    cannot start is a failure, not a skip."""
    from pyspark.sql import SparkSession
    from support.paths import export_to_subprocesses

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    export_to_subprocesses()
    session = (
        SparkSession.builder.master("local[2, 4]")
        .appName("pydp_core-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "5000")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
