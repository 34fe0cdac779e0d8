"""Release keys: generation, files with owner-only permissions, and per-column subkeys.

A key is a 256-bit secret for one release. The noise of a value is a function of (key, column, row
index) only, so a key must never serve two releases (``docs/io.md``).
"""
from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from typing import Any

#: Rows per keyed block (the unit of one ``mechanism.privatize`` call): part of the definition of the
#: noise, so every piece of one release must use the same value.
BLOCK_ROWS = 1 << 20
#: Length of a release key in bytes (256 bits).
KEY_BYTES = 32




# -- keys -------------------------------------------------------------------------------------------------
def generate_key() -> bytes:
    """A fresh 256-bit release key from the operating system's CSPRNG."""
    return secrets.token_bytes(KEY_BYTES)


def check_key(key: Any, name: str = "key") -> bytes:
    """``key`` as 32 bytes, or a TypeError/ValueError naming ``name`` (the key itself is never printed)."""
    if isinstance(key, (bytes, bytearray, memoryview)):
        raw = bytes(key)
    else:
        raise TypeError(f"{name} must be {KEY_BYTES} bytes (see pydp_core.io.generate_key), not {type(key).__name__}")
    if len(raw) != KEY_BYTES:
        raise ValueError(f"{name} must be exactly {KEY_BYTES} bytes (256 bits), got {len(raw)} bytes")
    return raw


def parse_key(data: bytes, name: str = "key file") -> bytes:
    """A key from a key file's content: 64 hexadecimal digits (what ``keygen`` writes) or 32 raw bytes."""
    text = data.strip()
    if len(text) == 2 * KEY_BYTES:
        try:
            return bytes.fromhex(text.decode("ascii"))
        except (UnicodeDecodeError, ValueError):
            pass
    if len(data) == KEY_BYTES:
        return bytes(data)
    raise ValueError(f"{name} must hold {2 * KEY_BYTES} hexadecimal digits or {KEY_BYTES} raw bytes")


def load_key(path: str | os.PathLike) -> bytes:
    """Read a key written by :func:`write_key` / ``pydp-core keygen``.

    Raises ``PermissionError`` if the file can be read or written by group or others (POSIX), as ssh
    does for private keys.
    """
    with open(path, "rb") as fh:
        if os.name == "posix":
            mode = os.fstat(fh.fileno()).st_mode
            if mode & 0o077:
                raise PermissionError(
                    f"key file {os.fspath(path)!r} is accessible by group or others (mode {mode & 0o777:o}); "
                    "run chmod 600 on it"
                )
        data = fh.read(4 * KEY_BYTES + 1)
    return parse_key(data, f"key file {os.fspath(path)!r}")


def write_key(path: str | os.PathLike, key: bytes | None = None, *, overwrite: bool = False) -> None:
    """Write ``key`` (default: a fresh one) as 64 hex digits, readable and writable by the owner only.

    The file is created with mode 0600 from the start (no window with wider permissions); an existing
    file is refused unless ``overwrite``, in which case it is replaced atomically.
    """
    raw = check_key(generate_key() if key is None else key)
    payload = (raw.hex() + "\n").encode("ascii")
    path = os.fspath(path)
    if not overwrite:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, payload)
            os.fsync(fd)
        finally:
            os.close(fd)
        return
    from ..io.atomic import atomic_output

    with atomic_output(path, mode=0o600) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(payload)


def column_key(key: bytes, column: str) -> bytes:
    """The per-column key HMAC-SHA256(key, "pydp_core.etl/column" 0x00 column)."""
    return hmac.new(key, b"pydp_core.etl/column\x00" + column.encode("utf-8"), hashlib.sha256).digest()
