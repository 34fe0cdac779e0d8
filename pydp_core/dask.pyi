from typing import Any, Mapping, Sequence, TypeVar

from .etl import _Bounds, _Mechanism

_T = TypeVar("_T")
__all__: list[str]

def privatize(
    data: _T,
    mechanism: _Mechanism | Mapping[str, _Mechanism],
    key: bytes,
    *,
    columns: str | Sequence[str] | None = ...,
    bounds: _Bounds | Mapping[str, _Bounds] | None = ...,
    index: str | None = ...,
    block_rows: int = ...,
    **privatize_kwargs: Any,
) -> _T: ...
