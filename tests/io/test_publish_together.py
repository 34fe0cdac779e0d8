"""Files published together (``pydp_core._files.atomic_outputs``): the companions are renamed into place
before the main output, and a rename that fails at any step leaves the old files as they were (or no file
where there was none) and no temporary file: never a new table without its sidecar, or a new table beside
a stale one. The same holds for the two callers, ``io.privatize_file`` (a CSV output and its
``.release.json``) and ``io.files.write_result`` (a table and its ``.json`` sidecar)."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from pydp_core import _files
from pydp_core import io as etl
from pydp_core.io import files
from pydp_core.io.ledger import _RECORDED_AT_DRIVER as UNRECORDED  # a check only: no record

pa = pytest.importorskip("pyarrow", reason="pyarrow is an optional extra (pydp_core[etl])")
pq = pytest.importorskip("pyarrow.parquet")


def _fail_replace_at(monkeypatch, step, after=False):
    """Make the ``step``-th call of os.replace (0-based) raise OSError, or with ``after`` an interruption just
    after its rename is done; the calls before and after it succeed."""
    real, calls = os.replace, []

    def replace(src, dst):
        calls.append((os.fspath(src), os.fspath(dst)))
        if len(calls) == step + 1 and not after:
            raise OSError(28, "No space left on device (injected)")
        real(src, dst)
        if len(calls) == step + 1:
            raise KeyboardInterrupt("injected")

    monkeypatch.setattr(_files.os, "replace", replace)
    return calls


def _contents(folder):
    return {name: (folder / name).read_bytes() for name in sorted(os.listdir(folder))}


def test_all_files_are_published_companions_first(tmp_path, monkeypatch):
    side, main = tmp_path / "t.json", tmp_path / "t.csv"
    side.write_text("old side")
    calls = _fail_replace_at(monkeypatch, 99)
    with _files.atomic_outputs([side, main]) as (side_tmp, main_tmp):
        assert os.path.dirname(side_tmp) == os.path.dirname(main_tmp) == str(tmp_path)
        with open(side_tmp, "w") as fh:
            fh.write("new side")
        with open(main_tmp, "w") as fh:
            fh.write("new main")
    assert [dst for _, dst in calls] == [str(side), str(main)]
    assert _contents(tmp_path) == {"t.csv": b"new main", "t.json": b"new side"}  # nothing kept aside is left


@pytest.mark.parametrize("old", [True, False], ids=["replacing", "new"])
@pytest.mark.parametrize("step", [0, 1])
@pytest.mark.parametrize("links", [True, False], ids=["hard-link", "copy"])
def test_a_failed_rename_at_any_step_leaves_the_old_files(tmp_path, monkeypatch, step, old, links):
    side, main = tmp_path / "t.json", tmp_path / "t.csv"
    if old:
        side.write_text("old side")
        main.write_text("old main")
    before = _contents(tmp_path)
    if not links:
        def no_link(src, dst):
            raise OSError(1, "Operation not permitted (injected)")
        monkeypatch.setattr(_files.os, "link", no_link)
    _fail_replace_at(monkeypatch, step)
    with pytest.raises(OSError, match="injected"), _files.atomic_outputs([side, main]) as (side_tmp, main_tmp):
        for tmp in (side_tmp, main_tmp):
            with open(tmp, "w") as fh:
                fh.write("new")
    assert _contents(tmp_path) == before


@pytest.mark.parametrize("old", [True, False], ids=["replacing", "new"])
@pytest.mark.parametrize("step", [0, 1], ids=["after-sidecar", "after-main"])
def test_an_interruption_just_after_a_rename(tmp_path, monkeypatch, old, step):
    # After the sidecar's rename it is taken back (the old files stand); after the main output's rename the
    # set is published (the new files stand, nothing kept aside).
    side, main = tmp_path / "t.json", tmp_path / "t.csv"
    if old:
        side.write_text("old side")
        main.write_text("old main")
    before = _contents(tmp_path)
    _fail_replace_at(monkeypatch, step, after=True)
    with pytest.raises(KeyboardInterrupt), _files.atomic_outputs([side, main]) as (side_tmp, main_tmp):
        for tmp, text in ((side_tmp, "new side"), (main_tmp, "new main")):
            with open(tmp, "w") as fh:
                fh.write(text)
    assert _contents(tmp_path) == (before if step == 0 else {"t.csv": b"new main", "t.json": b"new side"})


@pytest.mark.parametrize("where", ["body", "before_rename"])
def test_an_error_before_publication_leaves_the_old_files(tmp_path, where):
    side, main = tmp_path / "t.json", tmp_path / "t.csv"
    side.write_text("old side")
    before = _contents(tmp_path)

    def stop():
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt), \
            _files.atomic_outputs([side, main], before_rename=stop if where == "before_rename" else None) as tmps:
        for tmp in tmps:
            with open(tmp, "w") as fh:
                fh.write("new")
        if where == "body":
            stop()
    assert _contents(tmp_path) == before


def test_a_missing_output_folder_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="output folder"), \
            _files.atomic_outputs([tmp_path / "t.json", tmp_path / "no" / "t.csv"]):
        pass
    assert os.listdir(tmp_path) == []


def _csv_release(tmp_path, **kwargs):
    mech = etl.mechanism("laplace", epsilon=1.0, sensitivity="bounds", bounds=(0, 100))
    return etl.privatize_file(tmp_path / "in.csv", tmp_path / "out.csv", mech, key=bytes(range(32)), columns="age",
                              ledger=UNRECORDED, **kwargs)


def test_a_csv_release_publishes_its_report_before_the_output(tmp_path, monkeypatch):
    (tmp_path / "in.csv").write_text("name,age\nann,30\nbob,50\n")
    calls = _fail_replace_at(monkeypatch, 99)
    assert _csv_release(tmp_path) == 2
    assert [os.path.basename(dst) for _, dst in calls] == ["out.csv.release.json", "out.csv"]
    assert "age" in json.loads((tmp_path / "out.csv.release.json").read_text())["columns"]


@pytest.mark.parametrize("old", [True, False], ids=["replacing", "new"])
@pytest.mark.parametrize("step", [0, 1])
def test_a_csv_release_that_fails_to_publish_leaves_the_old_output_and_report(tmp_path, monkeypatch, step, old):
    (tmp_path / "in.csv").write_text("name,age\nann,30\nbob,50\n")
    if old:
        (tmp_path / "out.csv").write_text("name,age\nold,1.0\n")
        (tmp_path / "out.csv.release.json").write_text('{"old": true}\n')
    before = _contents(tmp_path)
    _fail_replace_at(monkeypatch, step)
    with pytest.raises(OSError, match="injected"):
        _csv_release(tmp_path, overwrite=True)
    assert _contents(tmp_path) == before


@pytest.mark.parametrize("old", [True, False], ids=["replacing", "new"])
@pytest.mark.parametrize("step", [0, 1])
def test_a_result_that_fails_to_publish_leaves_the_old_table_and_sidecar(tmp_path, monkeypatch, step, old):
    target = tmp_path / "out.parquet"
    if old:
        files.write_result(pa.table({"x": [1.0]}), str(target), {"old": True})
    before = _contents(tmp_path)
    _fail_replace_at(monkeypatch, step)
    with pytest.raises(OSError, match="injected"):
        files.write_result(pa.table({"x": np.arange(3.0)}), str(target), {"new": True}, overwrite=True)
    assert _contents(tmp_path) == before


def test_a_result_is_published_sidecar_first(tmp_path, monkeypatch):
    target = tmp_path / "out.parquet"
    calls = _fail_replace_at(monkeypatch, 99)
    assert files.write_result(pa.table({"x": np.arange(3.0)}), str(target), {"new": True}) == str(target) + ".json"
    assert [os.path.basename(dst) for _, dst in calls] == ["out.parquet.json", "out.parquet"]
    assert pq.read_table(target).column("x").to_pylist() == [0.0, 1.0, 2.0]
    assert json.loads((tmp_path / "out.parquet.json").read_text()) == {"new": True}
