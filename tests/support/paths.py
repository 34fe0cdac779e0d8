"""Paths the tests share: the repository, the tests folder and the package under test.

Subprocesses started by tests must import the same ``pydp_core`` as the test process (the installed
copy in CI, the in-place build in a checkout): :func:`subprocess_env` puts its parent folder first on
``PYTHONPATH`` and sets ``PYTHONSAFEPATH`` so that the working directory (the repository, whose
``pydp_core/`` has no compiled extension on a clean clone) is never imported instead.
"""
from __future__ import annotations

import os
from pathlib import Path

import pydp_core

REPO_ROOT = Path(__file__).resolve().parents[2]
TESTS_DIR = Path(__file__).resolve().parents[1]
PKG_PARENT = Path(pydp_core.__file__).resolve().parents[1]


def subprocess_env(**extra: str) -> dict[str, str]:
    """The environment of a subprocess that imports the package under test and ``tests/support``."""
    env = dict(os.environ)
    parts = [str(PKG_PARENT), str(TESTS_DIR)]
    if env.get("PYTHONPATH"):
        parts.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(parts)
    env["PYTHONSAFEPATH"] = "1"
    env.update(extra)
    return env


def export_to_subprocesses() -> None:
    """Make every process started from now on (engine workers included) import the package under test.

    Spark and Dask start their workers from this process's environment, often with the repository as the
    working directory, whose ``pydp_core/`` has no compiled extension on a clean clone.
    """
    env = subprocess_env()
    os.environ["PYTHONPATH"] = env["PYTHONPATH"]
    os.environ["PYTHONSAFEPATH"] = "1"
