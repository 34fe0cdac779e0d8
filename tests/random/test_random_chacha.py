"""The ChaCha20 generator against the RFC 8439 test vectors and an independent pure-Python reference."""
import struct

import numpy as np
import pytest
from support.chacha import RFC_VECTORS, py_block, split_rfc

import pydp_core
from pydp_core import _core

R = _core.random
IMPLS = R.chacha_impls()


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("key,counter,nonce,expected", RFC_VECTORS)
def test_rfc8439_block_vectors(impl, key, counter, nonce, expected):
    c64, n64 = split_rfc(counter, bytes.fromhex(nonce))
    assert R.chacha20_block(key, c64, n64, 1, impl) == bytes.fromhex(expected)
    # The same block as part of a long run (SIMD paths compute 8 or 16 blocks at a time).
    run = R.chacha20_block(key, c64 - 5 if c64 >= 5 else c64, n64, 37, impl)
    off = 5 if c64 >= 5 else 0
    assert run[64 * off: 64 * off + 64] == bytes.fromhex(expected)


def test_python_reference_reproduces_rfc_block():
    # The pure-Python reference reproduces the RFC block too, so it can serve for the carry test below.
    key, counter, nonce, expected = RFC_VECTORS[0]
    c64, n64 = split_rfc(counter, bytes.fromhex(nonce))
    assert py_block(key, c64, n64) == bytes.fromhex(expected)


@pytest.mark.parametrize("impl", IMPLS)
def test_64bit_counter_carry_matches_reference(impl):
    key = bytes(range(100, 132))
    start = 0xFFFFFFFF - 6  # the run crosses the carry from word 12 into word 13
    got = R.chacha20_block(key, start, 0x0123456789ABCDEF, 40, impl)
    ref = b"".join(py_block(key, start + b, 0x0123456789ABCDEF) for b in range(40))
    assert got == ref


def test_impls_agree_on_long_runs():
    rng = np.random.default_rng(5)
    for _ in range(5):
        key = rng.bytes(32)
        counter = int(rng.integers(0, 2**63))
        nonce = int(rng.integers(0, 2**63))
        outs = {impl: R.chacha20_block(key, counter, nonce, 67, impl) for impl in IMPLS}
        assert len(set(outs.values())) == 1


def test_cryptography_package_agrees():
    crypto = pytest.importorskip("cryptography.hazmat.primitives.ciphers", reason="cryptography not installed")
    key = bytes(range(7, 39))
    nonce12 = bytes(range(12))
    c64, n64 = split_rfc(3, nonce12)
    enc = crypto.Cipher(crypto.algorithms.ChaCha20(key, struct.pack("<I", 3) + nonce12), mode=None).encryptor()
    assert R.chacha20_block(key, c64, n64, 20) == enc.update(bytes(64 * 20))


def test_generator_words_are_the_keystream():
    key = bytes(range(32))
    g = R.Generator(key, 77)
    words = g.random_raw(300)
    stream = R.chacha20_block(key, 0, 77, 38)
    expected = np.frombuffer(stream, dtype="<u8")[:300]
    assert np.array_equal(words, expected)
    assert g.next_u64() == int(np.frombuffer(stream, dtype="<u8")[300])


def test_generator_reserved_stream_and_key_length():
    with pytest.raises(ValueError, match="reserved"):
        R.Generator(bytes(32), 2**64 - 1)
    with pytest.raises(ValueError, match="32 bytes"):
        R.Generator(bytes(31), 0)


def test_chunks_are_disjoint_counter_ranges():
    g = R.Generator(bytes(range(32)), 3)
    c = g.chunk(5)
    assert c.block_counter == 5 * R.CHUNK_BLOCKS
    first = g.reserve_chunks(4)  # nothing drawn yet: chunks 0..3
    assert first == 0 and g.block_counter == 4 * R.CHUNK_BLOCKS
    g.next_u64()  # the sequential stream now uses chunk 4, so the next reservation starts at 5
    assert g.reserve_chunks(2) == 5 and g.block_counter == 7 * R.CHUNK_BLOCKS
    # chunk c's first words are the keystream from block c * 2^24
    w = c.random_raw(8)
    assert np.array_equal(w, np.frombuffer(R.chacha20_block(bytes(range(32)), 5 * R.CHUNK_BLOCKS, 3, 1), "<u8"))


def test_spawned_keys_are_prf_outputs():
    g = R.Generator(bytes(range(32)), 0)
    a, b = g.spawn(0), g.spawn(1)
    assert a.key != b.key and a.key != g.key
    # derived from (key, stream, i) only: the parent's position does not matter
    g.random_raw(1000)
    assert g.spawn(1).key == b.key
    # and from the stream id too
    assert R.Generator(bytes(range(32)), 9).spawn(1).key != b.key


def test_ziggurat_tables_close():
    zn, ze = R.ziggurat_closure()
    assert abs(zn) < 1e-12 and abs(ze) < 1e-12


def test_default_generator_is_secure_chacha():
    rng = pydp_core.Random()
    assert not rng.seeded
    assert "secure" in repr(rng)
    # two unseeded generators never agree
    assert not np.array_equal(pydp_core.Random().random_raw(4), pydp_core.Random().random_raw(4))
