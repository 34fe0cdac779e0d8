"""A local Spark session for the tests (``local[2, 4]``: two threads, up to four attempts per task)."""
from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from .paths import export_to_subprocesses


def local_spark(app: str, shuffle_partitions: int = 3) -> Iterator[Any]:
    """Yield a local SparkSession whose Python workers run this interpreter and import the package under test;
    skip where Spark cannot start (no Java, no free port). Stopped when the generator is closed."""
    pytest.importorskip("pyspark", reason="pyspark is an optional extra (pydp_core[spark])")
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    export_to_subprocesses()
    try:
        session = (SparkSession.builder.master("local[2, 4]").appName(app)
                   .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                   .config("spark.sql.shuffle.partitions", str(shuffle_partitions)).getOrCreate())
    except Exception as exc:  # no Java, no free port, ...
        pytest.skip(f"a local Spark session cannot start here: {exc}")
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
