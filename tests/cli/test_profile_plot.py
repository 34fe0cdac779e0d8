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
    (["-m", "gaussian:scale=1", "--png", "x.png", "--out", "y.png"], "--png is its deprecated alias"),
    (["-m", "gaussian:scale=1", "--out", "x.png", "--format", "pdf"], "ends in .png but --format is pdf"),
    (["-m", "gaussian:scale=1", "--out", "x"], "(or give --format)"),
    (["-m", "gaussian:scale=1", "--title", "T"], "--title applies to a figure: give --out FILE"),
    (["gaussian", "--scale", "1", "--label", "T"], "--label applies to a figure"),
    (["-m", "gaussian:scale=1", "-m", "gdp:mu=1", "--label", "A", "--out", "x.png"], "--label: give one per mechanism (2), got 1"),
    (["-m", "gaussian:scale=1", "--style", "no-such-style", "--out", "x.png"], "--style: unknown style 'no-such-style'"),
    (["-m", "gaussian:scale=1", "--size", "0", "3", "--out", "x.png"], "--size must be two lengths"),
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


# ----- the figure's structure (what is drawn, not the pixels) -----------------------------------------------
def figure(*argv):
    pytest.importorskip("matplotlib", reason="matplotlib is an optional extra (pydp_core[plot])")
    from pydp_core.cli import profile

    args = cli.build_parser().parse_args(["profile", *argv, "--out", "unused.png"])
    return profile.figure(args)


@pytest.fixture
def close():
    figs = []
    yield figs.append
    import matplotlib.pyplot as plt

    for fig in figs:
        plt.close(fig)


def legend(fig):
    (leg,) = fig.legends
    return [t.get_text() for t in leg.get_texts()], leg.get_title().get_text()


def lines(ax):
    return {line.get_label(): line for line in ax.get_lines()}


def test_figure_has_one_shared_legend_labelled_from_the_mechanisms(close):
    fig = figure("-m", "gaussian:scale=1", "-m", "laplace:scale=2,sensitivity=0.5", "--compose", "1", "10",
                 "--points", "40")
    close(fig)
    axes = fig.get_axes()
    assert [ax.get_title() for ax in axes] == ["privacy profile", "trade-off function", "ROC of the best attack"]
    assert [ax.get_xlabel() for ax in axes] == ["privacy loss ε", "type I error α", "false-positive rate"]
    assert [(ax.get_xscale(), ax.get_yscale()) for ax in axes] == [("linear", "log"), ("linear", "linear"), ("log", "log")]
    assert all(ax.get_legend() is None for ax in axes)  # no legend inside a panel
    texts, note = legend(fig)
    curves = ["Gaussian, σ = 1, k = 1", "Gaussian, σ = 1, k = 10", "Laplace, b = 2, Δ = 0.5, k = 1",
              "Laplace, b = 2, Δ = 0.5, k = 10"]
    assert texts == curves + ["no leakage"]
    # Every panel draws every curve; the bounds are about 1e-5 of the height apart: not shaded, and said so.
    for ax in axes:
        assert set(curves) <= set(lines(ax)) and not ax.collections
    assert "too narrow to shade" in note and "shaded: certified" not in note
    # Curves that coincide stay visible: each is drawn thinner than the one below it.
    widths = [lines(axes[0])[c].get_linewidth() for c in curves]
    assert widths == sorted(widths, reverse=True) and len(set(widths)) == len(widths)


def test_one_composition_count_keeps_the_plain_label_and_labels_can_be_given(close):
    fig = figure("gaussian", "--scale", "2", "-m", "gdp:mu=0.5", "-m", "approx_dp:epsilon=1,delta=1e-6",
                 "-m", "randomized_response:epsilon=2", "--points", "20", "--curves", "tradeoff")
    close(fig)
    assert legend(fig)[0] == ["Gaussian, σ = 2", "GDP, μ = 0.5", "(ε, δ)-DP, ε = 1, δ = 1e-06",
                              "randomized response, ε = 2", "no leakage"]
    fig = figure("-m", "gaussian:scale=1", "-m", "subbotin:r=1.5,scale=1", "--compose", "4", "--points", "20",
                 "--label", "A", "--label", "B", "--title", "Two mechanisms", "--size", "7", "3")
    close(fig)
    assert legend(fig)[0][:2] == ["A, k = 4", "B, k = 4"]
    assert fig.get_suptitle() == "Two mechanisms"
    np.testing.assert_array_equal(fig.get_size_inches(), [7.0, 3.0])


def test_a_pure_dp_profile_drops_to_zero_at_its_epsilon(close):
    fig = figure("-m", "laplace:scale=1", "-m", "gaussian:scale=1", "--curves", "profile")
    close(fig)
    (ax,) = fig.get_axes()
    floor = ax.get_ylim()[0]
    # The default range reaches past the Laplace mechanism's epsilon = 1 (and the Gaussian's delta 1e-9).
    assert 1.05 <= ax.get_xlim()[1] <= 9.0
    x, y = (np.asarray(v, dtype=float) for v in lines(ax)["Laplace, b = 1"].get_data())
    seen = np.flatnonzero(np.isfinite(y))
    last = seen[-1]
    # The line runs from delta(eps) > 0 down through the bottom of the axis at the first grid point past
    # eps = 1 where the certified upper bound is 0, and stops there (it does not end in mid-air).
    assert y[last] < floor and np.all(y[:last] > 0) and np.all(np.isnan(y[last + 1:]))
    step = x[1] - x[0]
    assert 1.0 <= x[last] <= 1.0 + 2 * step and y[seen[-3]] > 1e-3
    # A mechanism without pure DP is not cut: the Gaussian's line is finite everywhere.
    assert np.all(np.isfinite(lines(ax)["Gaussian, σ = 1"].get_data()[1]))


def test_bands_are_shaded_when_they_are_wide_enough(close):
    pytest.importorskip("matplotlib", reason="matplotlib is an optional extra (pydp_core[plot])")
    from pydp_core.accounting.curves import PrivacyCurves
    from pydp_core.accounting.pld import Interval
    from pydp_core.cli import profile

    eps, alpha = np.linspace(0, 2, 11), np.linspace(0, 1, 11)
    delta = np.exp(-3 * eps) / 2
    wide = PrivacyCurves(eps, Interval(delta / 10, delta), alpha, Interval(1 - alpha, 1 - alpha),
                         Interval(alpha, alpha))
    narrow = PrivacyCurves(eps, Interval(delta * (1 - 1e-9), delta), alpha, Interval(1 - alpha, 1 - alpha),
                           Interval(alpha, alpha))
    args = cli.build_parser().parse_args(["profile", "-m", "gdp:mu=1", "--out", "unused.svg"])
    fig = profile._draw(profile._pyplot(), [("w", "wide", 1, wide), ("n", "narrow", 1, narrow)],
                        ["profile", "tradeoff"], args)
    close(fig)
    profile_ax, tradeoff_ax = fig.get_axes()
    # One band: the wide profile's, from its lower to its upper bound; the note says the rest is too narrow.
    (band,) = profile_ax.collections
    ys = band.get_paths()[0].vertices[:, 1]
    assert np.isclose(ys.min(), delta.min() / 10) and np.isclose(ys.max(), delta.max())
    assert not tradeoff_ax.collections
    note = legend(fig)[1]
    assert "shaded: certified bounds" in note and "elsewhere within" in note


def test_style_and_format_options(capsys, tmp_path, close):
    import matplotlib.pyplot as plt

    fig = figure("-m", "gaussian:scale=1", "--points", "10", "--style", "grayscale", "--curves", "roc")
    close(fig)
    with plt.style.context("grayscale"):
        first = plt.rcParams["axes.prop_cycle"].by_key()["color"][0]
    assert lines(fig.get_axes()[0])["Gaussian, σ = 1"].get_color() == first
    # --format names the format of a file without a suffix.
    out = tmp_path / "figure"
    code, stdout, err = run(capsys, "profile", "-m", "gaussian:scale=1", "--points", "10", "--out", str(out),
                            "--format", "svg")
    assert code == 0, err
    svg = out.read_text(encoding="utf-8")
    assert svg.startswith("<?xml") and "Gaussian, σ = 1" in svg


def test_png_is_a_deprecated_alias_of_out(capsys, tmp_path):
    out = tmp_path / "p.png"
    code, stdout, err = run(capsys, "profile", "laplace", "--scale", "1", "--points", "10", "--png", str(out))
    assert code == 0 and stdout == f"wrote {out}\n"
    assert err == "pydp-core profile: warning: --png is deprecated; use --out FILE (.png, .svg or .pdf)\n"
    assert out.read_bytes().startswith(MAGIC[".png"])
