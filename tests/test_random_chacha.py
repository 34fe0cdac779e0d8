"""The ChaCha20 generator against the RFC 8439 test vectors and an independent pure-Python reference."""
import struct

import numpy as np
import pytest

import pydp_core
from pydp_core import _core

R = _core.random
IMPLS = R.chacha_impls()


def _split_rfc(counter32: int, nonce12: bytes) -> tuple[int, int]:
    """RFC 8439 state (32-bit counter, 96-bit nonce) as our (64-bit counter, 64-bit nonce) words 12-15."""
    n0, n1, n2 = struct.unpack("<3I", nonce12)
    return counter32 | (n0 << 32), n1 | (n2 << 32)


def _py_block(key: bytes, counter64: int, nonce64: int) -> bytes:
    """Straightforward ChaCha20 block function (RFC 8439 Section 2.3), written independently."""
    m = 0xFFFFFFFF

    def rotl(v, c):
        return ((v << c) & m) | (v >> (32 - c))

    s = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574, *struct.unpack("<8I", key),
         counter64 & m, counter64 >> 32, nonce64 & m, nonce64 >> 32]
    x = list(s)

    def qr(a, b, c, d):
        x[a] = (x[a] + x[b]) & m; x[d] = rotl(x[d] ^ x[a], 16)
        x[c] = (x[c] + x[d]) & m; x[b] = rotl(x[b] ^ x[c], 12)
        x[a] = (x[a] + x[b]) & m; x[d] = rotl(x[d] ^ x[a], 8)
        x[c] = (x[c] + x[d]) & m; x[b] = rotl(x[b] ^ x[c], 7)

    for _ in range(10):
        qr(0, 4, 8, 12); qr(1, 5, 9, 13); qr(2, 6, 10, 14); qr(3, 7, 11, 15)
        qr(0, 5, 10, 15); qr(1, 6, 11, 12); qr(2, 7, 8, 13); qr(3, 4, 9, 14)
    return struct.pack("<16I", *[(a + b) & m for a, b in zip(x, s)])


# RFC 8439 Section 2.3.2 and Appendix A.1 (test vectors 1-5): key, counter, nonce, keystream block.
RFC_VECTORS = [
    (bytes(range(32)), 1, "000000090000004a00000000",
     "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
     "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e"),
    (bytes(32), 0, "000000000000000000000000",
     "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
     "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586"),
    (bytes(32), 1, "000000000000000000000000",
     "9f07e7be5551387a98ba977c732d080dcb0f29a048e3656912c6533e32ee7aed"
     "29b721769ce64e43d57133b074d839d531ed1f28510afb45ace10a1f4b794d6f"),
    (bytes(31) + b"\x01", 1, "000000000000000000000000",
     "3aeb5224ecf849929b9d828db1ced4dd832025e8018b8160b82284f3c949aa5a"
     "8eca00bbb4a73bdad192b5c42f73f2fd4e273644c8b36125a64addeb006c13a0"),
    (b"\x00\xff" + bytes(30), 2, "000000000000000000000000",
     "72d54dfbf12ec44b362692df94137f328fea8da73990265ec1bbbea1ae9af0ca"
     "13b25aa26cb4a648cb9b9d1be65b2c0924a66c54d545ec1b7374f4872e99f096"),
    (bytes(32), 0, "000000000000000000000002",
     "c2c64d378cd536374ae204b9ef933fcd1a8b2288b3dfa49672ab765b54ee27c7"
     "8a970e0e955c14f3a88e741b97c286f75f8fc299e8148362fa198a39531bed6d"),
]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("key,counter,nonce,expected", RFC_VECTORS)
def test_rfc8439_block_vectors(impl, key, counter, nonce, expected):
    c64, n64 = _split_rfc(counter, bytes.fromhex(nonce))
    assert R.chacha20_block(key, c64, n64, 1, impl) == bytes.fromhex(expected)
    # The same block as part of a long run (SIMD paths compute 8 or 16 blocks at a time).
    run = R.chacha20_block(key, c64 - 5 if c64 >= 5 else c64, n64, 37, impl)
    off = 5 if c64 >= 5 else 0
    assert run[64 * off: 64 * off + 64] == bytes.fromhex(expected)


def test_python_reference_reproduces_rfc_block():
    # The pure-Python reference reproduces the RFC block too, so it can serve for the carry test below.
    key, counter, nonce, expected = RFC_VECTORS[0]
    c64, n64 = _split_rfc(counter, bytes.fromhex(nonce))
    assert _py_block(key, c64, n64) == bytes.fromhex(expected)


@pytest.mark.parametrize("impl", IMPLS)
def test_64bit_counter_carry_matches_reference(impl):
    key = bytes(range(100, 132))
    start = 0xFFFFFFFF - 6  # the run crosses the carry from word 12 into word 13
    got = R.chacha20_block(key, start, 0x0123456789ABCDEF, 40, impl)
    ref = b"".join(_py_block(key, start + b, 0x0123456789ABCDEF) for b in range(40))
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
    c64, n64 = _split_rfc(3, nonce12)
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
