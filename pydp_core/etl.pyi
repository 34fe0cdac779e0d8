import os
from typing import Any, Callable, Mapping, Protocol, Sequence, TypeVar

import numpy as np

class _Mechanism(Protocol):
    def privatize(self, values: np.ndarray, rng: Any = ...) -> Any: ...

_T = TypeVar("_T")
_Bounds = tuple[float, float]

BLOCK_ROWS: int
KEY_BYTES: int
__all__: list[str]

def generate_key() -> bytes: ...
def check_key(key: Any, name: str = ...) -> bytes: ...
def parse_key(data: bytes, name: str = ...) -> bytes: ...
def load_key(path: str | os.PathLike[str]) -> bytes: ...
def write_key(path: str | os.PathLike[str], key: bytes | None = ..., *, overwrite: bool = ...) -> None: ...
def column_key(key: bytes, column: str) -> bytes: ...
def privatizer(mech: _Mechanism, kwargs: Mapping[str, Any]) -> Callable[[np.ndarray, Any], np.ndarray]: ...
def check_bounds(bounds: Any, name: str = ...) -> _Bounds | None: ...
def sensitivity_from_bounds(bounds: _Bounds) -> float: ...
def mechanism(
    name: str,
    epsilon: float,
    delta: float = ...,
    sensitivity: float | str = ...,
    *,
    bounds: _Bounds | None = ...,
    r: float | None = ...,
) -> Any: ...

class KeyedNoise:
    mechanism: _Mechanism
    column: str
    bounds: _Bounds | None
    block_rows: int
    fill: float
    def __init__(
        self,
        mechanism: _Mechanism,
        key: bytes,
        column: str,
        *,
        bounds: _Bounds | None = ...,
        block_rows: int = ...,
        threads: int | None = ...,
        privatize_kwargs: Mapping[str, Any] | None = ...,
    ) -> None: ...
    def apply(self, values: np.ndarray, start: int) -> np.ndarray: ...
    def apply_indexed(self, values: np.ndarray, rows: np.ndarray) -> np.ndarray: ...

def privatize(
    data: _T,
    mechanism: _Mechanism | Mapping[str, _Mechanism],
    *,
    columns: str | Sequence[str] | None = ...,
    bounds: _Bounds | Mapping[str, _Bounds] | None = ...,
    key: bytes | None = ...,
    rng: Any = ...,
    offset: int = ...,
    index: str | np.ndarray | None = ...,
    block_rows: int = ...,
    threads: int | None = ...,
    **privatize_kwargs: Any,
) -> _T: ...
def file_format(path: str, fmt: str | None = ...) -> str: ...
def privatize_file(
    source: str | os.PathLike[str],
    target: str | os.PathLike[str],
    columns: str | Sequence[str],
    mechanism: _Mechanism | Mapping[str, _Mechanism],
    *,
    key: bytes | None = ...,
    bounds: _Bounds | Mapping[str, _Bounds] | None = ...,
    format: str | None = ...,
    output_format: str | None = ...,
    batch_rows: int = ...,
    block_rows: int = ...,
    overwrite: bool = ...,
    progress: Callable[[int], Any] | None = ...,
    compression: str | None = ...,
    **privatize_kwargs: Any,
) -> int: ...
