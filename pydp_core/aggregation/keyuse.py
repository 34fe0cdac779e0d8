"""The record of a keyed aggregation: the key's ledger entry (an exact repeat is accepted, any other use of
the key refused) and the accountant's charge, both before any noise is drawn."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..io.frames import release_ledger
from ..io.ledger import KeyLedger, KeyReuseError, SessionLedger
from .spec import AggregateSpec


@dataclass(frozen=True)
class KeyUse:
    """Where a keyed aggregation is recorded and charged: the key's ledger (None: a fresh key, used once)
    and the accountant (None: none). Kept out of :class:`AggregateSpec`, which the engines send to workers."""

    ledger: KeyLedger | SessionLedger | None
    accountant: Any


def key_use(key: Any, ledger: Any, accountant: Any) -> KeyUse:
    """The :class:`KeyUse` of an :func:`aggregate` call's ``key``, ``ledger`` and ``accountant`` arguments."""
    if accountant is not None and not callable(getattr(accountant, "spend", None)):
        raise TypeError(f"accountant must be a pydp_core.Accountant, not {type(accountant).__name__}")
    if key is None and ledger not in (None, False):
        raise ValueError("ledger applies to a given key (key=): a fresh key is used once and needs no record")
    led = release_ledger(key, ledger)
    return KeyUse(led if isinstance(led, (KeyLedger, SessionLedger)) else None, accountant)


def record_release(spec: AggregateSpec, use: KeyUse | None, group_cols: list[np.ndarray], partials: dict[Any, Any]) -> None:
    """Record the release in the key's ledger (the partials determine the output for the release's key) and
    charge the accountant, once, before any noise is drawn."""
    if use is None:
        return
    total = spec.budget.total()
    _claim(use, spec, "aggregate", partials_digest(group_cols, partials), None if spec.auto else total, total,
           "this aggregation was already released under this key on other data: the two outputs would share "
           "their noise, and their difference would reveal the change")


def record_search(spec: AggregateSpec, use: KeyUse | None, counts: Mapping[str, np.ndarray]) -> None:
    """Record the searches of ``bounds="auto"`` in the key's ledger (their grid counts determine the bounds found
    for the release's key) and charge the accountant the whole given budget, before the searches draw noise.

    The release itself is recorded after the searches (:func:`record_release`): a second call on data with the
    same grid counts finds the same bounds, and is then refused if its partials differ."""
    if use is None:
        return
    assert spec.auto is not None
    names = sorted(counts)
    digest = partials_digest([np.asarray(names, dtype=object)], {"grid": np.stack([counts[c] for c in names])})
    _claim(use, spec, "aggregate_bounds", digest, spec.auto.charge, spec.auto.charge,
           "the bounds of this aggregation were already chosen under this key on other data")


def _claim(use: KeyUse, spec: AggregateSpec, piece: str, digest: str, charged: Mapping[Any, Any] | None, spent: Mapping[Any, Any],
           refusal: str) -> None:
    """Claim ``piece`` of the release in the key's ledger, charging ``charged`` (if any) to the accountant on the
    first claim; an exact repeat (same release, same digest: the same output) is accepted and not charged again."""

    def charge() -> None:
        if use.accountant is not None and charged is not None:
            charge_budget(use.accountant, charged)

    if use.ledger is None:
        charge()
        return
    try:
        use.ledger.claim(piece, 0, 1, digest, on_first=charge, release=spec.release, spent=spent)
    except KeyReuseError as err:
        if "another release" in str(err):
            raise
        raise KeyReuseError(f"{refusal}. Use a new key for a new release, or a pydp_core.Session (whose releases get "
                            "independent noise and are charged to its budget)") from None


def charge_budget(accountant: Any, total: Mapping[str, Any]) -> None:
    """Charge ``accountant`` with a release's composed guarantee (the report's ``budget``).

    (epsilon, delta)-DP is one spend; rho-zCDP one; delta-approximate rho-zCDP (selection under ``rho``) is
    charged as rho-zCDP and (0, delta)-DP, whose composition it is bounded by (Bun and Steinke 2016).
    """
    from ..accounting import ZCDP, ApproxDP, PureDP

    if "rho" in total:
        accountant.spend(ZCDP(total["rho"]))
        if total["delta"] > 0:
            accountant.spend(ApproxDP(0.0, total["delta"]))
    elif total["delta"] > 0:
        accountant.spend(ApproxDP(total["epsilon"], total["delta"]))
    else:
        accountant.spend(PureDP(total["epsilon"]))


def partials_digest(group_cols: Sequence[np.ndarray], partials: Mapping[str, np.ndarray]) -> str:
    """SHA-256 (hex) of the groups and their exact partial aggregates: what the output depends on."""
    import hashlib

    h = hashlib.sha256(b"pydp_core.aggregation/partials\x00")
    # By value and in the order of the groups' values: an engine may hand back the groups in another order,
    # int32 for int64, or dictionary-encoded strings.
    labels = ["\x00".join(map(repr, g)) for g in zip(*[np.asarray(c).tolist() for c in group_cols])]
    order = np.array(sorted(range(len(labels)), key=labels.__getitem__), dtype=np.int64)
    h.update(len(labels).to_bytes(8, "little") + "\x01".join(labels[i] for i in order).encode("utf-8"))
    for name in sorted(partials):
        h.update(name.encode("utf-8") + b"\x00")
        h.update(np.ascontiguousarray(np.asarray(partials[name], dtype=np.int64)[order]).tobytes())
    return h.hexdigest()

