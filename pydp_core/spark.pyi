from typing import Any, Mapping, Sequence

from .etl import _Bounds, _Mechanism

__all__: list[str]

def privatize(
    df: Any,
    columns: str | Sequence[str],
    mechanism: _Mechanism | Mapping[str, _Mechanism],
    key: bytes,
    *,
    bounds: _Bounds | Mapping[str, _Bounds] | None = ...,
    index: str | None = ...,
    block_rows: int = ...,
    **privatize_kwargs: Any,
) -> Any: ...
