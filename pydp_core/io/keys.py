"""Release keys: generation, files with owner-only permissions, and the keys derived from them.

A key is a 256-bit secret. The randomness of a release is derived from the key and a canonical
description of the release (:func:`release_id`, :func:`release_key`): the mechanism and every parameter
that changes the output law, the columns, and :data:`NOISE_FORMAT`. Two releases that differ in anything
but the data and the rows get independent noise; the pieces and retries of one release reproduce it
exactly. The derivation and its proof of independence are in ``docs/io.md``.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import math
import os
import secrets
from typing import Any

#: Rows per keyed block (the unit of one ``mechanism.privatize`` call): part of the definition of the
#: noise, so every piece of one release must use the same value.
BLOCK_ROWS = 1 << 20
#: Length of a release key in bytes (256 bits).
KEY_BYTES = 32
#: The version of the noise format: part of every release description, so that a change in how noise is
#: derived or drawn can never make two versions' outputs share randomness.
NOISE_FORMAT = 2


def generate_key() -> bytes:
    """A fresh 256-bit release key from the operating system's CSPRNG (``secrets.token_bytes``).

    Returns
    -------
    bytes
        32 random bytes. Use one key for one release only (docs/io.md).

    Raises
    ------
    OSError
        If the operating system cannot supply randomness.

    Examples
    --------
    >>> from pydp_core import io
    >>> len(io.generate_key())
    32
    >>> io.generate_key() != io.generate_key()
    True
    """
    return secrets.token_bytes(KEY_BYTES)


def check_key(key: Any, name: str = "key") -> bytes:
    """``key`` as 32 bytes, or an error naming ``name`` (the key itself is never printed).

    Parameters
    ----------
    key : bytes, bytearray or memoryview
        The release key.
    name : str, optional
        The argument name for the messages (default ``"key"``).

    Returns
    -------
    bytes
        The 32 key bytes.

    Raises
    ------
    TypeError
        If ``key`` is not bytes-like.
    ValueError
        If ``key`` is not exactly 32 bytes long.

    Examples
    --------
    >>> from pydp_core import io
    >>> io.check_key(bytearray(32)) == bytes(32)
    True
    >>> io.check_key(b"short")
    Traceback (most recent call last):
    ...
    ValueError: key must be exactly 32 bytes (256 bits), got 5 bytes
    """
    if isinstance(key, (bytes, bytearray, memoryview)):
        raw = bytes(key)
    else:
        raise TypeError(f"{name} must be {KEY_BYTES} bytes (see pydp_core.io.generate_key), not {type(key).__name__}")
    if len(raw) != KEY_BYTES:
        raise ValueError(f"{name} must be exactly {KEY_BYTES} bytes (256 bits), got {len(raw)} bytes")
    return raw


def parse_key(data: bytes, name: str = "key file") -> bytes:
    """A key from a key file's content: 64 hexadecimal digits (what ``keygen`` writes) or 32 raw bytes.

    Parameters
    ----------
    data : bytes
        The file content (surrounding white space is ignored for the hexadecimal form).
    name : str, optional
        What to call the source in the message (default ``"key file"``).

    Returns
    -------
    bytes
        The 32 key bytes.

    Raises
    ------
    ValueError
        If ``data`` is neither form.

    Examples
    --------
    >>> from pydp_core import io
    >>> io.parse_key(b"00" * 32 + b"\\n") == bytes(32)
    True
    >>> io.parse_key(bytes(range(32))) == bytes(range(32))
    True
    """
    text = data.strip()
    if len(text) == 2 * KEY_BYTES:
        try:
            return bytes.fromhex(text.decode("ascii"))
        except (UnicodeDecodeError, ValueError):
            pass
    if len(data) == KEY_BYTES:
        return bytes(data)
    raise ValueError(f"{name} must hold {2 * KEY_BYTES} hexadecimal digits or {KEY_BYTES} raw bytes")


def load_key(path: str | os.PathLike[str]) -> bytes:
    """Read a key written by :func:`write_key` / ``pydp-core keygen``.

    Parameters
    ----------
    path : str or os.PathLike
        The key file.

    Returns
    -------
    bytes
        The 32 key bytes.

    Raises
    ------
    PermissionError
        If the file can be read or written by group or others (POSIX), as ssh refuses private keys.
    OSError
        If the file cannot be read.
    ValueError
        If the content is not a key (:func:`parse_key`).

    Examples
    --------
    >>> import os, tempfile
    >>> from pydp_core import io
    >>> path = os.path.join(tempfile.mkdtemp(), "release.key")
    >>> io.write_key(path, bytes(range(32)))
    >>> io.load_key(path) == bytes(range(32))
    True
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


def write_key(path: str | os.PathLike[str], key: bytes | None = None, *, overwrite: bool = False) -> None:
    """Write ``key`` (default: a fresh one) as 64 hex digits, readable and writable by the owner only.

    The file is created with mode 0600 from the start (no window with wider permissions).

    Parameters
    ----------
    path : str or os.PathLike
        The key file to create.
    key : bytes, optional
        The key (32 bytes); ``None`` (the default) writes a fresh :func:`generate_key`.
    overwrite : bool, optional
        Replace an existing file (atomically); by default an existing file is refused.

    Returns
    -------
    None

    Raises
    ------
    FileExistsError
        If ``path`` exists and ``overwrite`` is false.
    TypeError, ValueError
        If ``key`` is not 32 bytes (:func:`check_key`).
    OSError
        If the file cannot be written.

    Examples
    --------
    >>> import os, stat, tempfile
    >>> from pydp_core import io
    >>> path = os.path.join(tempfile.mkdtemp(), "release.key")
    >>> io.write_key(path)
    >>> oct(stat.S_IMODE(os.stat(path).st_mode))
    '0o600'
    >>> io.write_key(path)
    Traceback (most recent call last):
    ...
    FileExistsError: ...
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
    from .atomic import atomic_output

    with atomic_output(path, mode=0o600) as tmp, open(tmp, "wb") as fh:
        fh.write(payload)


def column_key(key: bytes, column: str) -> bytes:
    """The per-column key HMAC-SHA256(key, "pydp_core.etl/column" || 0x00 || column).

    Parameters
    ----------
    key : bytes
        The release key (32 bytes; not checked here).
    column : str
        The column name (UTF-8).

    Returns
    -------
    bytes
        The 32-byte key of the column's ChaCha20 streams.

    Raises
    ------
    TypeError
        If ``column`` is not a str.

    Examples
    --------
    >>> from pydp_core import io
    >>> io.column_key(bytes(range(32)), "age").hex()[:16]
    '5bb95d9b08d3e152'
    >>> io.column_key(bytes(range(32)), "age") != io.column_key(bytes(range(32)), "income")
    True
    """
    if not isinstance(column, str):
        raise TypeError(f"column names must be strings, not {type(column).__name__}")
    return hmac.new(key, b"pydp_core.etl/column\x00" + column.encode("utf-8"), hashlib.sha256).digest()


def _canonical(value: Any, where: str) -> Any:
    """``value`` as JSON data with one spelling per value: floats as exact hexadecimal strings, tuples as
    lists, mapping keys as strings (sorted when dumped)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            raise ValueError(f"{where}: a release description cannot hold NaN")
        return {"f": value.hex()}
    if hasattr(value, "dtype") and getattr(value, "shape", None) == ():  # numpy scalars
        return _canonical(value.item(), where)
    if isinstance(value, dict):
        return {str(k): _canonical(v, where) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(v, where) for v in value]
    raise TypeError(f"{where}: a release description cannot hold {type(value).__name__}")


def release_id(description: dict[str, Any]) -> str:
    """The identifier of a release: SHA-256 of its canonical description (hex).

    Parameters
    ----------
    description : dict
        What determines the output law of the release: the mechanism and its parameters, the columns, the
        bounds, the block size, ... (JSON data: str, int, float, bool, None, lists and dicts). The noise
        format :data:`NOISE_FORMAT` is added here.

    Returns
    -------
    str
        64 hexadecimal digits; equal descriptions (floats compared exactly) give equal identifiers.

    Raises
    ------
    TypeError, ValueError
        If the description holds something other than JSON data, or NaN.

    Examples
    --------
    >>> from pydp_core import io
    >>> io.release_id({"epsilon": 1.0}) == io.release_id({"epsilon": 1.0})
    True
    >>> io.release_id({"epsilon": 1.0}) == io.release_id({"epsilon": 2.0})
    False
    """
    doc = {"format": NOISE_FORMAT, "release": _canonical(description, "description")}
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(b"pydp_core.release/description\x00" + text.encode("ascii")).hexdigest()


def release_key(key: bytes, release: str) -> bytes:
    """The key of one release: HMAC-SHA256(key, "pydp_core.release/key" || 0x00 || release id).

    Parameters
    ----------
    key : bytes
        The 32-byte key (checked).
    release : str
        :func:`release_id` of the release's description.

    Returns
    -------
    bytes
        32 bytes; every stream of the release is derived from them (:func:`column_key` for columns).

    Raises
    ------
    TypeError, ValueError
        If ``key`` is not 32 bytes, or ``release`` is not 64 hexadecimal digits.

    Examples
    --------
    >>> from pydp_core import io
    >>> k = bytes(range(32))
    >>> io.release_key(k, io.release_id({"epsilon": 1.0})) != io.release_key(k, io.release_id({"epsilon": 2.0}))
    True
    """
    raw = check_key(key)
    if not isinstance(release, str) or len(release) != 64:
        raise ValueError("release must be a release id (64 hexadecimal digits, pydp_core.io.release_id)")
    ident = bytes.fromhex(release)
    return hmac.new(raw, b"pydp_core.release/key\x00" + ident, hashlib.sha256).digest()
