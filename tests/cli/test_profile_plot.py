"""``pydp-core profile`` with several mechanisms: figures, the CSV of certified curves, and bad input."""
from __future__ import annotations

import csv
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from support.paths import subprocess_env  # noqa: E402

import pydp_core
from pydp_core import cli
from pydp_core.accounting import PLD, gdp, privacy_curves
from pydp_core.noise import Gaussian, Subbotin

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(pydp_core.__file__)))
MAGIC = {".png": b"\x89PNG\r\n\x1a\n", ".svg": b"<?xml", ".pdf": b"%PDF"}


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def read_csv(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def series(rows, mechanism, k, curve):
    got = [r for r in rows if (r["mechanism"], r["compose"], r["curve"]) == (mechanism, str(k), curve)]
    assert got, (mechanism, k, curve)
    return tuple(np.array([float(r[c]) for r in got]) for c in ("x", "lower", "upper"))


@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf"])
def test_figure_is_written_atomically(capsys, tmp_path, suffix):
    out = tmp_path / f"curves{suffix}"
    code, stdout, err = run(capsys, "profile", "-m", "gaussian:scale=1", "-m", "laplace:scale=2",
                            "--compose", "1", "5", "--points", "30", "--out", str(out))
    assert code == 0, err
    assert out.read_bytes().startswith(MAGIC[suffix]) and stdout == f"wrote {out}\n"
    assert [p.name for p in tmp_path.iterdir()] == [out.name]


def test_csv_values_are_the_library_intervals(capsys, tmp_path):
    path = tmp_path / "c.csv"
    code, _, err = run(capsys, "profile", "-m", "gaussian:scale=2", "-m", "subbotin:r=1.5,scale=1,sensitivity=0.5",
                       "--compose", "1", "10", "--points", "25", "--eps-max", "3", "--csv", str(path))
    assert code == 0, err
    rows = read_csv(path)
    assert {r["curve"] for r in rows} == {"profile", "tradeoff", "roc"}
    for spec, pld in (("gaussian:scale=2", PLD.from_noise(Gaussian(), scale=2.0)),
                      ("subbotin:r=1.5,scale=1,sensitivity=0.5", PLD.from_noise(Subbotin(1.5), scale=1.0, sensitivity=0.5))):
        for k in (1, 10):
            eps, dlo, dup = series(rows, spec, k, "profile")
            alpha, blo, bup = series(rows, spec, k, "tradeoff")
            a2, plo, pup = series(rows, spec, k, "roc")
            np.testing.assert_array_equal(eps, np.linspace(0, 3, 25))
            np.testing.assert_array_equal(alpha, a2)
            ref = privacy_curves(pld if k == 1 else pld.self_compose(k), epsilon=eps, alpha=alpha)
            # The CSV holds the library's intervals exactly (repr round-trips a float).
            for got, want in ((dlo, ref.delta.lower), (dup, ref.delta.upper), (blo, ref.beta.lower),
                              (bup, ref.beta.upper), (plo, ref.power.lower), (pup, ref.power.upper)):
                np.testing.assert_array_equal(got, want)
            assert np.all(dlo <= dup) and np.all(blo <= bup)
            np.testing.assert_array_equal(plo, 1.0 - bup)
    # The Gaussian's bands contain the exact GDP curves (mu = sqrt(k) / 2).
    for k in (1, 10):
        mu = np.sqrt(k) / 2.0
        eps, dlo, dup = series(rows, "gaussian:scale=2", k, "profile")
        exact = gdp.gdp_delta(mu, epsilon=eps)
        assert np.all(dlo <= exact * (1 + 1e-12)) and np.all(exact <= dup * (1 + 1e-12))
        alpha, blo, bup = series(rows, "gaussian:scale=2", k, "tradeoff")
        exact = gdp.tradeoff(alpha, mu)
        assert np.all(blo <= exact + 1e-12) and np.all(exact <= bup + 1e-12)


def test_positional_noise_joins_the_overlay_and_stdout_gets_the_csv(capsys):
    code, out, err = run(capsys, "profile", "gaussian", "--scale", "2", "-m", "gdp:mu=0.5", "--points", "5",
                         "--curves", "tradeoff")
    assert code == 0, err
    rows = list(csv.DictReader(out.splitlines()))
    assert {r["curve"] for r in rows} == {"tradeoff"}
    labels = list(dict.fromkeys(r["mechanism"] for r in rows))
    assert len(labels) == 2 and labels[1] == "gdp:mu=0.5"
    # Gaussian scale 2 and sensitivity 1 is GDP(0.5): the same bounds from both routes.
    a = [r for r in rows if r["mechanism"] == labels[0]]
    b = [r for r in rows if r["mechanism"] == labels[1]]
    assert [(r["x"], r["lower"], r["upper"]) for r in a] == [(r["x"], r["lower"], r["upper"]) for r in b]


def test_other_mechanisms_parse(capsys):
    code, out, err = run(capsys, "profile", "-m", "approx_dp:epsilon=1,delta=1e-6", "-m", "randomized_response:epsilon=2",
                         "-m", "logistic:scale=1,sampling_rate=0.1", "--points", "4", "--eps-max", "2")
    assert code == 0, err
    rows = list(csv.DictReader(out.splitlines()))
    rr = [r for r in rows if r["mechanism"] == "randomized_response:epsilon=2" and r["curve"] == "profile"]
    # Pure 2-DP: delta(2) = 0 is inside the band.
    assert float(rr[-1]["x"]) == 2.0 and float(rr[-1]["lower"]) == 0.0


@pytest.mark.parametrize("argv, message", [
    (["-m", "foo:scale=1"], "unknown mechanism 'foo'"),
    (["-m", "gaussian:scale=x"], "scale is not a number"),
    (["-m", "gaussian:scale"], "expected key=value"),
    (["-m", "gaussian"], "needs a scale"),
    (["-m", "gaussian:scale=-1"], "scale must be > 0"),
    (["-m", "gaussian:scale=1,colour=2"], "unknown fields"),
    (["-m", "gdp:sigma=1"], "gdp takes exactly one key, mu"),
    (["-m", "gaussian:scale=1", "--out", "x.jpg"], "--out must end in .png, .svg, .pdf"),
    (["-m", "gaussian:scale=1", "--png", "x.png"], "use --out FILE"),
    (["-m", "gaussian:scale=1", "--eps-max", "-1"], "--eps-max must be > 0"),
    (["-m", "gaussian:scale=1", "--points", "1"], "--points must be >= 2"),
    ([], "give a NOISE family, or --mechanism SPEC"),
])
def test_bad_input_is_one_line(capsys, tmp_path, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "profile", *argv)
    assert code == 1 and out == ""
    assert err.startswith("pydp-core profile: error:") and message in err and err.count("\n") == 1, err
    assert list(tmp_path.iterdir()) == []


def test_bad_compose_count_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["profile", "-m", "gaussian:scale=1", "--compose", "0"])
    assert exc.value.code == 2
    assert "must be > 0" in capsys.readouterr().err


def test_missing_matplotlib_names_the_plot_extra(tmp_path):
    code = textwrap.dedent(f"""
        import sys
        sys.modules["matplotlib"] = None  # as on a base install without the extra
        from pydp_core.cli import main
        sys.exit(main(["profile", "-m", "gaussian:scale=1", "--out", {str(tmp_path / 'f.png')!r}]))
    """)
    res = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         env=subprocess_env())
    assert res.returncode == 1, res.stderr
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "'plot' extra" in lines[0] and "Traceback" not in res.stderr, res.stderr
    assert list(tmp_path.iterdir()) == []
