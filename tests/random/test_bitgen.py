"""The numpy BitGenerator ChaCha20 (pydp_core/random/bitgen.py, csrc/include/pydp/random/bitgen.hpp)."""
from __future__ import annotations

import contextlib
import gc
import math
import os
import pickle
import select
import signal
import warnings

import numpy as np
import pytest
from scipy import stats
from support import chacha
from support.stats import ALPHA

from pydp_core import _core
from pydp_core.random import ChaCha20, Random

R = _core.random
KEY = bytes(range(32))



# ---- the stream ------------------------------------------------------------------------------------
def test_is_a_numpy_bit_generator():
    bg = ChaCha20(1)
    assert isinstance(bg, np.random.BitGenerator)
    assert isinstance(np.random.default_rng(bg), np.random.Generator)
    assert np.random.default_rng(bg).bit_generator is bg


def test_raw_output_is_the_project_stream_for_the_same_key():
    bg = ChaCha20(key=KEY)
    ref = R.Generator(KEY, 0)
    # Mixed request sizes cross the 256-word buffer of the BitGenerator and the 128-word one of Generator.
    for n in (1, 7, 250, 3, 1000, 0, 513):
        assert np.array_equal(bg.random_raw(n), ref.random_raw(n))
    # ... and the ChaCha20 block kernel itself: keystream blocks 0, 1, ... of (key, nonce 0), little-endian.
    words = ChaCha20(key=KEY).random_raw(40)
    assert words.astype("<u8").tobytes() == R.chacha20_block(KEY, 0, 0, 5)


def test_stream_i_is_random_stream_i():
    base = Random._wrap(R.Generator(KEY, 0), 1, True)
    for i in (0, 1, 5, 2**64 - 2):
        assert np.array_equal(ChaCha20(key=KEY).stream(i).random_raw(300), base.stream(i).random_raw(300))


@pytest.mark.parametrize("key,counter,nonce,expected", chacha.RFC_VECTORS)
def test_rfc8439_block_vectors_through_the_state(key, counter, nonce, expected):
    block, stream = chacha.split_rfc(counter, bytes.fromhex(nonce))
    bg = ChaCha20(key=KEY)
    bg.state = {"bit_generator": "ChaCha20", "state": {"key": key, "stream": stream, "block": block, "word": 0}}
    assert bg.random_raw(8).astype("<u8").tobytes() == bytes.fromhex(expected)


def test_next_uint32_and_next_double_follow_numpy_conventions():
    bg = ChaCha20(key=KEY)
    words = R.Generator(KEY, 0).random_raw(4)
    iface = bg.ctypes
    # next_uint32: the low, then the high half of one 64-bit word.
    halves = [iface.next_uint32(iface.state) for _ in range(4)]
    assert halves == [int(words[0]) & 0xFFFFFFFF, int(words[0]) >> 32, int(words[1]) & 0xFFFFFFFF, int(words[1]) >> 32]
    assert iface.next_double(iface.state) == (int(words[2]) >> 11) * 2.0**-53
    assert iface.next_uint64(iface.state) == int(words[3])


def test_state_round_trip_mid_block_and_with_a_pending_half_word():
    bg = ChaCha20(7)
    g = np.random.Generator(bg)
    g.integers(0, 2**32, size=3, dtype=np.uint32)  # leaves a pending half-word
    bg.random_raw(13)
    state = bg.state
    assert state["has_uint32"] == 1 and state["state"]["word"] != 0
    other = ChaCha20(key=bytes(32))
    other.state = state
    assert other.state == state
    assert np.array_equal(np.random.Generator(other).integers(0, 2**32, 5, dtype=np.uint32),
                          g.integers(0, 2**32, 5, dtype=np.uint32))
    assert np.array_equal(other.random_raw(600), bg.random_raw(600))


def test_pickle_round_trip():
    g = np.random.Generator(ChaCha20(3))
    g.standard_normal(11)
    g2 = pickle.loads(pickle.dumps(g))
    assert np.array_equal(g2.standard_normal(1000), g.standard_normal(1000))


# ---- seeds, streams and spawn -----------------------------------------------------------------------
def test_seed_follows_numpy_seed_sequence_convention():
    key = np.random.SeedSequence(2024).generate_state(8, np.uint32).astype("<u4").tobytes()
    assert np.array_equal(ChaCha20(2024).random_raw(50), ChaCha20(key=key).random_raw(50))
    assert np.array_equal(ChaCha20(np.random.SeedSequence(2024)).random_raw(50), ChaCha20(2024).random_raw(50))
    assert np.array_equal(ChaCha20([1, 2, 3]).random_raw(5), ChaCha20([1, 2, 3]).random_raw(5))


def test_determinism_for_a_seed_and_difference_between_seeds():
    a = np.random.Generator(ChaCha20(99)).standard_normal(1000)
    b = np.random.Generator(ChaCha20(99)).standard_normal(1000)
    c = np.random.Generator(ChaCha20(100)).standard_normal(1000)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_default_is_secure_and_unseeded():
    a, b = ChaCha20(), ChaCha20()
    assert not np.array_equal(a.random_raw(4), b.random_raw(4))
    assert repr(a) == "ChaCha20(secure)" and repr(ChaCha20(1)) == "ChaCha20(seeded (not for releases))"
    assert repr(a.stream(0)) == "ChaCha20(secure)" and repr(a.spawn(1)[0]) == "ChaCha20(secure)"


def test_spawn_follows_numpy_and_gives_new_children_each_call():
    parent = ChaCha20(5)
    first, second = parent.spawn(2), parent.spawn(1)
    ref = np.random.SeedSequence(5).spawn(3)
    for child, ss in zip(first + second, ref):
        assert np.array_equal(child.random_raw(20), ChaCha20(ss).random_raw(20))
    outs = [c.random_raw(20) for c in ChaCha20(5).spawn(3)] + [ChaCha20(5).random_raw(20)]
    assert len({o.tobytes() for o in outs}) == 4
    assert len(np.random.Generator(ChaCha20(5)).spawn(2)) == 2


def test_streams_and_spawned_children_are_uncorrelated():
    # Pearson correlation of n normals from two streams: |z| = |r| sqrt(n) beyond the two-sided 1e-6
    # quantile would reject independence.
    n = 200_000
    z_crit = stats.norm.isf(ALPHA / 2)
    base = ChaCha20(11)
    pairs = [(base.stream(0), base.stream(1)), tuple(base.spawn(2)), (base, base.stream(0))]
    for a, b in pairs:
        x = np.random.Generator(a).standard_normal(n)
        y = np.random.Generator(b).standard_normal(n)
        assert abs(np.corrcoef(x, y)[0, 1]) * math.sqrt(n) < z_crit


# ---- numpy's distributions ----------------------------------------------------------------------------
def _calls():
    """One call of every public method of numpy.random.Generator that draws."""
    return {
        "beta": lambda g: g.beta(2.0, 3.0, 100),
        "binomial": lambda g: g.binomial(10, 0.3, 100),
        "bytes": lambda g: np.frombuffer(g.bytes(100), dtype=np.uint8),
        "chisquare": lambda g: g.chisquare(3.0, 100),
        "choice": lambda g: g.choice(10, 100),
        "dirichlet": lambda g: g.dirichlet([1.0, 2.0, 3.0], 100),
        "exponential": lambda g: g.exponential(2.0, 100),
        "f": lambda g: g.f(3.0, 4.0, 100),
        "gamma": lambda g: g.gamma(0.5, 1.0, 100),
        "geometric": lambda g: g.geometric(0.2, 100),
        "gumbel": lambda g: g.gumbel(0.0, 1.0, 100),
        "hypergeometric": lambda g: g.hypergeometric(10, 5, 7, 100),
        "integers": lambda g: np.concatenate([g.integers(0, 10**12, 50), g.integers(0, 200, 50, dtype=np.uint8),
                                              g.integers(-5, 5, 50, dtype=np.int32), g.integers(0, 2, 50, dtype=bool)]),
        "laplace": lambda g: g.laplace(0.0, 1.0, 100),
        "logistic": lambda g: g.logistic(0.0, 1.0, 100),
        "lognormal": lambda g: g.lognormal(0.0, 1.0, 100),
        "logseries": lambda g: g.logseries(0.5, 100),
        "multinomial": lambda g: g.multinomial(20, [0.2, 0.3, 0.5], 100),
        "multivariate_hypergeometric": lambda g: g.multivariate_hypergeometric([5, 6, 7], 6, 100),
        "multivariate_normal": lambda g: g.multivariate_normal([0.0, 1.0], [[1.0, 0.5], [0.5, 2.0]], 100),
        "negative_binomial": lambda g: g.negative_binomial(3, 0.4, 100),
        "noncentral_chisquare": lambda g: g.noncentral_chisquare(3.0, 2.0, 100),
        "noncentral_f": lambda g: g.noncentral_f(3.0, 4.0, 2.0, 100),
        "normal": lambda g: g.normal(1.0, 2.0, 100),
        "pareto": lambda g: g.pareto(3.0, 100),
        "permutation": lambda g: g.permutation(100),
        "permuted": lambda g: g.permuted(np.arange(100)),
        "poisson": lambda g: g.poisson(4.0, 100),
        "power": lambda g: g.power(2.0, 100),
        "random": lambda g: np.concatenate([g.random(50), g.random(50, dtype=np.float32)]),
        "rayleigh": lambda g: g.rayleigh(1.0, 100),
        "shuffle": lambda g: (lambda a: (g.shuffle(a), a)[1])(np.arange(100)),
        "spawn": lambda g: np.array([c.random() for c in g.spawn(3)]),
        "standard_cauchy": lambda g: g.standard_cauchy(100),
        "standard_exponential": lambda g: np.concatenate([g.standard_exponential(50),
                                                          g.standard_exponential(50, method="inv"),
                                                          g.standard_exponential(50, dtype=np.float32)]),
        "standard_gamma": lambda g: np.concatenate([g.standard_gamma(2.5, 50), g.standard_gamma(0.3, 50, dtype=np.float32)]),
        "standard_normal": lambda g: np.concatenate([g.standard_normal(50), g.standard_normal(50, dtype=np.float32)]),
        "standard_t": lambda g: g.standard_t(5.0, 100),
        "triangular": lambda g: g.triangular(0.0, 1.0, 3.0, 100),
        "uniform": lambda g: g.uniform(-1.0, 1.0, 100),
        "vonmises": lambda g: g.vonmises(0.0, 2.0, 100),
        "wald": lambda g: g.wald(1.0, 2.0, 100),
        "weibull": lambda g: g.weibull(1.5, 100),
        "zipf": lambda g: g.zipf(2.0, 100),
    }


def test_every_numpy_distribution_is_covered():
    drawing = {name for name in dir(np.random.Generator) if not name.startswith("_")} - {"bit_generator"}
    assert drawing == set(_calls()), "a numpy.random.Generator method is missing from _calls (or gone)"


@pytest.mark.parametrize("name", sorted(_calls()))
def test_every_numpy_distribution_works_and_is_deterministic(name):
    call = _calls()[name]
    a = call(np.random.Generator(ChaCha20(31)))
    b = call(np.random.Generator(ChaCha20(31)))
    assert np.array_equal(a, b)
    assert np.all(np.isfinite(np.asarray(a, dtype=float)))
    assert not np.array_equal(a, call(np.random.Generator(ChaCha20(32))))


@pytest.mark.parametrize("draw,dist", [
    (lambda g, n: g.standard_normal(n), "norm"),
    (lambda g, n: g.random(n), "uniform"),
    (lambda g, n: g.standard_exponential(n), "expon"),
    (lambda g, n: g.standard_normal(n, dtype=np.float32).astype(float), "norm"),
])
def test_distributions_fit_at_a_fixed_false_alarm_rate(draw, dist):
    x = draw(np.random.Generator(ChaCha20(2026)), 200_000)
    assert stats.kstest(x, dist).pvalue > ALPHA


def test_uint32_path_is_uniform():
    # Chi-square of 2^32-range integers in 64 bins (next_uint32 halves of the stream).
    x = np.random.Generator(ChaCha20(8)).integers(0, 2**32, 640_000, dtype=np.uint32)
    counts = np.bincount(x >> 26, minlength=64)
    assert stats.chisquare(counts).pvalue > ALPHA


# ---- interfaces -------------------------------------------------------------------------------------
def test_capsule_keeps_its_state_alive():
    cap = ChaCha20(key=KEY).capsule
    gc.collect()

    class Holder:  # a minimal bit generator: numpy's Generator only needs capsule and lock
        def __init__(self, capsule):
            import threading

            self.capsule = capsule
            self.lock = threading.Lock()

    g = np.random.Generator(Holder(cap))  # the ChaCha20 object is gone; its capsule still works
    assert np.array_equal(g.integers(0, 2**64, 4, dtype=np.uint64), R.Generator(KEY, 0).random_raw(4))


def test_cffi_is_declined_clearly():
    with pytest.raises(NotImplementedError, match="ctypes"):
        ChaCha20(1).cffi


def test_random_raw_shapes_and_output_false():
    bg = ChaCha20(key=KEY)
    ref = R.Generator(KEY, 0).random_raw(1 + 6 + 4)
    assert bg.random_raw() == int(ref[0])
    assert np.array_equal(bg.random_raw((2, 3)), ref[1:7].reshape(2, 3))
    assert bg.random_raw(4, output=False) is None
    assert bg.random_raw() == int(R.Generator(KEY, 0).random_raw(12)[11])


# ---- processes --------------------------------------------------------------------------------------
def _child_words(bg: ChaCha20) -> bytes:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: write 8 words and leave without running pytest's teardown
        os.close(r)
        os.write(w, bg.random_raw(8).tobytes())
        os._exit(0)
    os.close(w)
    data = b""
    while len(data) < 64:
        chunk = os.read(r, 64 - len(data))
        if not chunk:
            break
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return data


def test_fork_rekeys_secure_generators_and_keeps_seeded_ones():
    secure, seeded = ChaCha20(), ChaCha20(4)
    g = np.random.Generator(secure)
    child_secure, child_seeded = _child_words(secure), _child_words(seeded)
    assert len(child_secure) == len(child_seeded) == 64
    assert child_secure != secure.random_raw(8).tobytes()  # the child was re-keyed
    assert child_seeded == seeded.random_raw(8).tobytes()  # seeded: reproducible by design
    g.standard_normal(3)  # numpy Generators built on the parent keep working


# ---- bad input --------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs,exc,match", [
    ({"seed": -1}, ValueError, "non-negative"),
    ({"seed": 1.5}, TypeError, "seed"),
    ({"seed": "abc"}, TypeError, "seed"),
    ({"seed": True}, TypeError, "bool"),
    ({"seed": b"\x01"}, TypeError, "key="),
    ({"key": b"short"}, ValueError, "32 bytes"),
    ({"key": "x" * 32}, TypeError, "key"),
    ({"seed": 1, "key": KEY}, TypeError, "not both"),
])
def test_bad_construction(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        ChaCha20(**kwargs)


def test_bad_arguments():
    bg = ChaCha20(1)
    for bad, exc in ((-1, ValueError), (2**64 - 1, ValueError), (1.0, TypeError), (True, TypeError)):
        with pytest.raises(exc, match="i must"):
            bg.stream(bad)
    with pytest.raises(ValueError, match="negative"):
        bg.random_raw(-1)
    with pytest.raises(TypeError, match="size"):
        bg.random_raw(2.5)
    with pytest.raises(ValueError, match="n_children"):
        bg.spawn(-1)
    with pytest.raises(TypeError, match="n_children"):
        bg.spawn(1.0)
    good = bg.state
    with pytest.raises(TypeError, match="dict"):
        bg.state = [1]
    with pytest.raises(ValueError, match="ChaCha20"):
        bg.state = {**good, "bit_generator": "PCG64"}
    with pytest.raises(ValueError, match="missing"):
        bg.state = {"bit_generator": "ChaCha20", "state": {}}
    for field, value, exc in (("word", 8, ValueError), ("stream", 2**64 - 1, ValueError), ("block", -1, ValueError),
                              ("block", 1.0, TypeError), ("key", b"x", ValueError)):
        with pytest.raises(exc):
            bg.state = {**good, "state": {**good["state"], field: value}}
    assert bg.state == good  # failed assignments changed nothing


def test_fork_while_another_thread_holds_the_lock_does_not_hang():
    import threading

    bg = ChaCha20()
    held, release = threading.Event(), threading.Event()

    def hold():
        with bg.lock:
            held.set()
            release.wait(30)

    t = threading.Thread(target=hold)
    t.start()
    held.wait(30)
    pid = None
    try:
        r, w = os.pipe()
        with warnings.catch_warnings():  # Python >= 3.12 warns about forking with threads: that is the point
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # the at-fork re-keying must not wait for the parent's thread
            os.write(w, b"ok")
            os._exit(0)
        os.close(w)
        readable, _, _ = select.select([r], [], [], 30)
        assert readable, "the forked child hung in the at-fork handler"
        assert os.read(r, 2) == b"ok"
        os.close(r)
    finally:
        release.set()
        t.join()
        if pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
