"""The precomputed references (tests/data/calibration_references.json) are complete and still right.

They cover exactly the grids of tests/support/refdata.py, and a sample of them, recomputed by the 70-digit
reference (tests/support/mpref.py), agrees to 35 digits: a changed grid or reference that was not
followed by ``tools/precompute-references`` fails here.
"""
import json

import mpmath as mp
import numpy as np
import pytest
from support import refdata

DOC = json.loads(refdata.PATH.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(refdata.TABLES))
def test_the_file_covers_exactly_the_grid(name):
    points = refdata.TABLES[name][1]()
    assert set(DOC["tables"][name]) == {refdata.entry_key(p) for p in points}
    assert DOC["digits"] == refdata.DIGITS


@pytest.mark.parametrize("name", sorted(refdata.TABLES))
def test_a_sample_still_agrees_with_the_reference(name):
    points = refdata.TABLES[name][1]()
    rng = np.random.default_rng(20261202)
    sample = [points[i] for i in rng.choice(len(points), size=refdata.SAMPLE[name], replace=False)]
    for args in sample:
        stored = mp.mpf(DOC["tables"][name][refdata.entry_key(args)])
        with mp.workdps(60):
            fresh = refdata.TABLES[name][0](*args)
            err = abs(fresh - stored) if stored == 0 else abs(fresh / stored - 1)
        assert err < mp.mpf(10) ** -35, (name, args, mp.nstr(fresh, 40), mp.nstr(stored, 40))
