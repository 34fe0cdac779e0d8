"""ChaCha20 (RFC 8439) in pure Python and the RFC's test vectors: the independent reference of the generator tests."""
import struct


def split_rfc(counter32: int, nonce12: bytes) -> tuple[int, int]:
    """RFC 8439 state (32-bit counter, 96-bit nonce) as our (64-bit counter, 64-bit nonce) words 12-15."""
    n0, n1, n2 = struct.unpack("<3I", nonce12)
    return counter32 | (n0 << 32), n1 | (n2 << 32)


def py_block(key: bytes, counter64: int, nonce64: int) -> bytes:
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
