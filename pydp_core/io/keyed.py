"""Mechanisms for columns, and keyed noise that depends only on (key, release, column, row index).

Row ``i`` of column ``c`` of release ``R`` gets the ``i mod B``-th value of the stream
``Random(column_key(release_key(key, R), c)).stream(i // B)``, ``B = block_rows``, where ``R`` is the
:func:`~pydp_core.io.keys.release_id` of the release's description (:func:`release_description`): pieces,
partitions and retried tasks of one release reproduce their noise exactly, and releases that differ in
anything but their data get independent noise.

Over 600 lines (about 300 of code) because of the docstrings of the mechanism specifications it parses.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Callable

import numpy as np

from .._safety import privacy_warning
from .._validation import check_int
from .keys import BLOCK_ROWS, check_key, column_key, release_id, release_key
from .ledger import (
    _RECORDED_AT_DRIVER,
    KeyLedger,
    SessionLedger,
    _RecordedAtDriver,
    ledger_for_key,
    unrecorded_refused,
    values_digest,
)

#: ``f(values, rng)``: the noisy copy of a 1-D block of values.
Privatizer = Callable[[np.ndarray, Any], Any]


# -- bounds, sensitivity and mechanisms ------------------------------------------------------------------
def check_bounds(bounds: Any, name: str = "bounds") -> tuple[float, float] | None:
    """Clamping bounds as a pair of finite floats with lower < upper (``None`` passes through).

    Parameters
    ----------
    bounds : (real, real) or None
        ``(lower, upper)``; ints must convert to float64 exactly.
    name : str, optional
        The argument name for the messages (default ``"bounds"``).

    Returns
    -------
    (float, float) or None
        The bounds.

    Raises
    ------
    TypeError
        If ``bounds`` is not a pair of real numbers.
    ValueError
        If a bound is not finite or not exact in float64, or lower >= upper.

    Examples
    --------
    >>> from pydp_core import io
    >>> io.check_bounds((0, 100))
    (0.0, 100.0)
    >>> io.check_bounds((1.0, 1.0))
    Traceback (most recent call last):
    ...
    ValueError: bounds must satisfy lower < upper, got (1.0, 1.0)
    """
    if bounds is None:
        return None
    try:
        lo, hi = bounds
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a pair (lower, upper)") from None
    out = []
    for v, which in ((lo, "lower"), (hi, "upper")):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise TypeError(f"{name}: {which} bound must be a real number, not {type(v).__name__}")
        f = float(v)
        if not math.isfinite(f):
            raise ValueError(f"{name}: {which} bound must be finite, got {f}")
        if isinstance(v, (int, np.integer)) and int(f) != int(v):
            raise ValueError(f"{name}: {which} bound {v} is not exactly representable in float64")
        out.append(f)
    if not out[0] < out[1]:
        raise ValueError(f"{name} must satisfy lower < upper, got ({out[0]}, {out[1]})")
    return out[0], out[1]


def sensitivity_from_bounds(bounds: Any) -> float:
    """``upper - lower``: the sensitivity of releasing one clamped value when a record's value is replaced.

    Parameters
    ----------
    bounds : (real, real)
        The clamping bounds ``(lower, upper)`` (:func:`check_bounds`).

    Returns
    -------
    float
        ``upper - lower``.

    Raises
    ------
    TypeError, ValueError
        As :func:`check_bounds`, also for ``bounds=None``; ValueError if the difference overflows.

    Examples
    --------
    >>> from pydp_core import io
    >>> io.sensitivity_from_bounds((0, 100))
    100.0
    """
    checked = check_bounds(bounds)
    if checked is None:
        raise TypeError("bounds must be a pair (lower, upper), not None")
    lo, hi = checked
    d = hi - lo
    if not math.isfinite(d):
        raise ValueError("bounds: upper - lower overflows float64")
    return d


def mechanism(
    name: str,
    *,
    epsilon: float,
    delta: float = 0.0,
    sensitivity: float | str = 1.0,
    bounds: Any = None,
    r: float | None = None,
    confirm_delta: bool = False,
) -> Any:
    """Build ``pydp_core.<Name>Mechanism`` by name ("laplace", "gaussian", "logistic", "subbotin").

    With ``bounds`` the mechanism is tied to them: :func:`privatize` clamps to them when it is given no
    bounds, and refuses other bounds.

    Parameters
    ----------
    name : str
        The mechanism (case-insensitive).
    epsilon, delta : float
        The guarantee (``delta`` default 0).
    sensitivity : float or "bounds", optional
        The sensitivity (default 1); ``"bounds"`` takes :func:`sensitivity_from_bounds` of ``bounds``.
    bounds : (real, real), optional
        Needed with ``sensitivity="bounds"``. With a numeric ``sensitivity`` they are checked
        (:func:`check_bounds`) and the sensitivity must be at least ``upper - lower``, the sensitivity of
        one clamped value.
    r : float, optional
        The Subbotin order (subbotin only, required there).
    confirm_delta : bool, optional
        Accept a delta above 1e-3 without a :class:`~pydp_core.PrivacyWarning`.

    Returns
    -------
    AdditiveMechanism
        The calibrated mechanism.

    Raises
    ------
    ValueError
        If the name is unknown, ``sensitivity`` is a string other than "bounds", ``bounds`` or ``r`` is
        missing or misplaced, the sensitivity is below ``upper - lower``, or the calibration refuses a
        parameter.
    TypeError
        If ``bounds`` is not a pair of real numbers.
    RuntimeError
        If the mechanism is not available in this build.

    Examples
    --------
    >>> from pydp_core import io
    >>> io.mechanism("laplace", epsilon=1.0, sensitivity="bounds", bounds=(0, 10))
    LaplaceMechanism(epsilon=1, delta=0, sensitivity=10, scale=10)
    """
    from ..mechanisms import GaussianMechanism, LaplaceMechanism, LogisticMechanism, SubbotinMechanism
    from ..noise import from_name

    name = str(from_name(name.lower() if isinstance(name, str) else name, r, name_arg="mechanism").spec_name)
    checked = check_bounds(bounds)
    if isinstance(sensitivity, str):
        if sensitivity != "bounds":
            raise ValueError(f"sensitivity must be a positive number or 'bounds', got {sensitivity!r}")
        if checked is None:
            raise ValueError("sensitivity='bounds' needs bounds=(lower, upper)")
        sensitivity = sensitivity_from_bounds(checked)
    cls = {"laplace": LaplaceMechanism, "gaussian": GaussianMechanism, "logistic": LogisticMechanism,
           "subbotin": SubbotinMechanism}[name]
    if checked is not None:
        check_sensitivity_covers(sensitivity, checked)
    if name == "subbotin":
        mech = cls(r, epsilon=epsilon, delta=delta, sensitivity=sensitivity, confirm_delta=confirm_delta)
    else:
        mech = cls(epsilon=epsilon, delta=delta, sensitivity=sensitivity, confirm_delta=confirm_delta)
    mech.tied_bounds = checked
    return mech


def check_chargeable(mech: Any) -> Any:
    """``mech`` if it can charge an accountant (a pydp_core mechanism), else a TypeError."""
    if not callable(getattr(mech, "charge", None)):
        raise TypeError(f"accountant= needs a pydp_core mechanism with a charge method, not {type(mech).__name__}")
    return mech


def precheck_charges(accountant: Any, ledger: Any, release: str, mechanism: Any, columns: Sequence[str],
                     *, simulated: bool = False, contributions: int = 1) -> None:
    """Raise BudgetExceededError if charging every column of a release not yet recorded would pass the limit.

    The columns are charged one by one as their first pieces are recorded; trying them all first on a copy
    of the accountant means that a release that does not fit is refused whole, before any column is charged.
    """
    if accountant is None:
        return
    done = {p.column for p in getattr(ledger, "pieces", ()) if p.release == release}
    trial = accountant.copy()
    for c in columns:
        if c not in done:
            for _ in range(contributions):
                check_chargeable(pick_column(mechanism, c, "mechanism")).charge(trial, release=not simulated)


def check_contributions(units: Any, max_contributions: Any) -> int:
    """``max_contributions`` checked against the rows of each privacy unit (an error when one has more).

    Parameters
    ----------
    units : sequence
        The privacy unit (person) of every row.
    max_contributions : int
        The most rows one unit may hold (>= 1).

    Returns
    -------
    int
        ``max_contributions``.

    Raises
    ------
    ValueError
        If a unit holds more rows: the guarantee would hold per row, not per person.

    Examples
    --------
    >>> check_contributions(["ann", "bob", "ann"], 2)
    2
    """
    from collections import Counter

    k = check_int(max_contributions, "max_contributions", 1)
    counts = np.fromiter(Counter(units).values(), dtype=np.int64)
    if counts.size and counts.max() > k:
        raise ValueError(
            f"privacy_unit: {int((counts > k).sum())} unit(s) hold more than max_contributions={k} row(s) (up to "
            f"{int(counts.max())}): the guarantee would hold per row, not per person. Keep at most {k} row(s) per "
            "person (or aggregate them), or pass a larger max_contributions: each person's rows are then that many "
            "releases, charged and reported as max_contributions times the per-row budget"
        )
    return k


def check_sensitivity_covers(sensitivity: Any, bounds: tuple[float, float], column: str | None = None) -> None:
    """Raise ValueError unless ``sensitivity >= upper - lower`` (the sensitivity of one clamped value)."""
    need = sensitivity_from_bounds(bounds)
    if isinstance(sensitivity, (int, float, np.integer, np.floating)) and not float(sensitivity) >= need:
        where = "" if column is None else f" for column {column!r}"
        raise ValueError(
            f"sensitivity {float(sensitivity)!r} is below upper - lower = {need!r} of bounds {bounds}{where}: one "
            "record can change a clamped value by up to upper - lower, so the noise would be too small for the "
            "stated epsilon. Use sensitivity='bounds' (pydp_core.io.mechanism) or narrower bounds"
        )


def release_bounds(mech: Any, bounds: Any, column: str, sensitivity_holds: bool) -> tuple[float, float] | None:
    """The clamping bounds of a release of ``column``, checked against the mechanism's sensitivity.

    Parameters
    ----------
    mech : object
        The mechanism (its ``sensitivity`` attribute, and the bounds :func:`mechanism` tied it to).
    bounds : (real, real) or None
        The bounds given for the column.
    column : str
        The column (for the messages).
    sensitivity_holds : bool
        The user's declaration that the mechanism's sensitivity holds for the values as they are (for
        instance already-aggregated columns); required when there are no bounds, or when the mechanism
        has no numeric ``sensitivity`` to check.

    Returns
    -------
    (float, float) or None
        The bounds to clamp to: ``bounds``, else the mechanism's own.

    Raises
    ------
    ValueError
        If the bounds differ from the mechanism's, the sensitivity is below ``upper - lower``, or the
        sensitivity cannot be checked and ``sensitivity_holds`` is false.
    TypeError
        If ``sensitivity_holds`` is not a bool, or the bounds are not a pair of numbers.

    Examples
    --------
    >>> import pydp_core as dp
    >>> from pydp_core import io
    >>> io.release_bounds(io.mechanism("laplace", epsilon=1.0, sensitivity="bounds", bounds=(0, 10)), None, "x", False)
    (0.0, 10.0)
    >>> io.release_bounds(dp.LaplaceMechanism(epsilon=1.0), (0, 10), "x", False)
    Traceback (most recent call last):
    ...
    ValueError: sensitivity 1.0 is below upper - lower = 10.0 of bounds (0.0, 10.0) for column 'x': ...
    """
    if not isinstance(sensitivity_holds, bool):
        raise TypeError(f"sensitivity_holds must be True or False, not {type(sensitivity_holds).__name__}")
    checked = check_bounds(bounds)
    tied = getattr(mech, "tied_bounds", None)
    if tied is not None:
        if checked is not None and checked != tied:
            raise ValueError(
                f"the mechanism for column {column!r} was made for bounds {tied}, but bounds {checked} were given: "
                "its sensitivity holds for its own bounds only"
            )
        checked = tied
    sensitivity = getattr(mech, "sensitivity", None)
    if checked is None:
        if not sensitivity_holds:
            raise ValueError(
                f"column {column!r} has no bounds: without clamping one record can change a value without limit, so "
                "no sensitivity holds. Give bounds=(lower, upper), or pass sensitivity_holds=True to declare that "
                "the mechanism's sensitivity holds for these values (for instance an already-aggregated column)"
            )
        return None
    if not isinstance(sensitivity, (int, float, np.integer, np.floating)):
        if not sensitivity_holds:
            raise ValueError(
                f"the mechanism for column {column!r} has no numeric sensitivity to check against bounds {checked}: "
                "pass sensitivity_holds=True to declare that it holds"
            )
        return checked
    check_sensitivity_covers(sensitivity, checked, column)
    return checked




def _random_class() -> Any:
    from ..random import Random

    return Random


def check_mechanism(mech: Any, name: str = "mechanism") -> Any:
    """``mech`` if it has a ``privatize(values, rng=...)`` method, else a TypeError naming ``name``."""
    if not callable(getattr(mech, "privatize", None)):
        raise TypeError(f"{name} must be a mechanism with a privatize(values, rng=...) method, not {type(mech).__name__}")
    return mech


def privatizer(mech: Any, kwargs: Mapping[str, Any]) -> Privatizer:
    """``f(values, rng)``: the noisy copy of a 1-D block of values, one value per row.

    For the project's additive mechanisms (``pydp_core.LaplaceMechanism`` etc.) with ``release=True``
    (the default) every value is released as one scalar query with the mechanism's sensitivity, by
    :func:`pydp_core.release.release_noise` (``vector=False``): exact discrete noise on a power-of-two
    grid fixed by the scale, the floating-point-safe path. (``mechanism.privatize`` on an array would
    instead treat the whole block as one vector query, with a grid that depends on the block length.)
    When each record is one row, the column is then (epsilon, delta)-DP for a change of one record
    (parallel composition); a record spread over several rows needs a group sensitivity.

    Parameters
    ----------
    mech : object
        A pydp_core additive mechanism, or any object with ``privatize(values, rng=..., **kwargs)``.
    kwargs : mapping
        For the additive mechanisms only ``release`` (``False``: the floating-point ``simulate`` path,
        not for releases); for other objects, passed on to ``mech.privatize``.

    Returns
    -------
    callable
        ``f(values, rng)``.

    Raises
    ------
    TypeError
        If ``kwargs`` holds anything but ``release`` for an additive mechanism.

    Examples
    --------
    >>> import pydp_core as dp
    >>> from pydp_core import io
    >>> f = io.privatizer(dp.LaplaceMechanism(epsilon=1.0), {})
    >>> y = f(np.zeros(2), dp.Random(1))   # the caller checks the generator
    >>> y.shape, bool(np.all(y * 2**16 == np.round(y * 2**16)))
    ((2,), True)
    """
    from ..mechanisms import AdditiveMechanism

    kw = dict(kwargs)
    if isinstance(mech, AdditiveMechanism):
        release = kw.pop("release", True)
        if kw:
            raise TypeError(f"unexpected arguments for {type(mech).__name__}: {', '.join(kw)}")
        if not release:
            return lambda values, rng: mech.simulate(values, rng=rng)
        from ..release import release_noise

        noise, eps, delta, sens = mech.noise, mech.epsilon, mech.delta, mech.sensitivity
        # The callers check the generator (a keyed stream, or an rng= they checked): simulation=True
        # only lifts the seeded-generator check here; the mechanism has checked its delta.
        return lambda values, rng: release_noise(
            noise, values, epsilon=eps, delta=delta, sensitivity=sens, rng=rng, vector=False, simulation=True,
            confirm_delta=True,
        )
    return lambda values, rng: mech.privatize(values, rng=rng, **kw)


def pick_column(spec: Any, col: str, name: str, optional: bool = False) -> Any:
    """The entry of a per-column argument for column ``col``.

    ``spec`` is one value for every column, or a mapping ``{column: value}``; a missing column is a
    ValueError naming ``name``, or ``None`` when ``optional``.
    """
    if isinstance(spec, Mapping):
        if col in spec:
            return spec[col]
        if optional:
            return None
        raise ValueError(f"{name} has no entry for column {col!r}")
    return spec


# -- the description of a release ---------------------------------------------------------------------------
_LAW_ATTRIBUTES = ("epsilon", "delta", "sensitivity", "scale", "r")


def describe_mechanism(mech: Any) -> dict[str, Any]:
    """What determines the output law of ``mech``: its type, parameters, noise and tied bounds.

    A mechanism may say it itself with a ``release_description()`` method returning JSON data; otherwise
    the description holds its class, the numeric attributes ``epsilon``, ``delta``, ``sensitivity``,
    ``scale`` and ``r`` it has, its ``noise`` and its ``repr`` (so a user mechanism's ``repr`` must show
    every parameter of its law that those attributes do not).

    Parameters
    ----------
    mech : object
        The mechanism.

    Returns
    -------
    dict
        JSON data (floats exact), for :func:`~pydp_core.io.keys.release_id`.

    Raises
    ------
    Exception
        Whatever the mechanism's ``release_description()`` or ``repr`` raises.

    Examples
    --------
    >>> import pydp_core as dp
    >>> from pydp_core import io
    >>> a = io.describe_mechanism(dp.LaplaceMechanism(epsilon=1.0))
    >>> b = io.describe_mechanism(dp.LaplaceMechanism(epsilon=2.0))
    >>> a == b, a["type"]
    (False, 'pydp_core.mechanisms.LaplaceMechanism')
    """
    own = getattr(mech, "release_description", None)
    if callable(own):
        return {"type": f"{type(mech).__module__}.{type(mech).__qualname__}", "own": own()}
    out: dict[str, Any] = {"type": f"{type(mech).__module__}.{type(mech).__qualname__}", "repr": repr(mech)}
    for attr in _LAW_ATTRIBUTES:
        value = getattr(mech, attr, None)
        if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)):
            out[attr] = float(value)
    noise = getattr(mech, "noise", None)
    if noise is not None:
        out["noise"] = repr(noise)
    return out


def _effective_bounds(mech: Any, bounds: Any) -> list[float] | None:
    """The bounds a column is clamped to: those given, else the ones the mechanism was made for."""
    checked = check_bounds(bounds) or getattr(mech, "tied_bounds", None)
    return None if checked is None else [float(checked[0]), float(checked[1])]


def release_description(
    mechanism: Any, *, columns: str | Sequence[str], kind: str = "privatize", bounds: Any = None,
    block_rows: int = BLOCK_ROWS, privatize_kwargs: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The canonical description of a keyed column release: everything that changes its output law.

    Parameters
    ----------
    mechanism : object or mapping
        The mechanism, or ``{column: mechanism}``.
    kind : str, optional
        The front end's label (``"privatize"``).
    columns : str or sequence of str
        The columns of the release (order does not matter).
    bounds : pair, mapping or None, optional
        The clamping bounds, or ``{column: bounds}``; a column without them is described by the bounds its
        mechanism was made for (:func:`mechanism`), so that both spellings of one release are one release.
    block_rows : int, optional
        Rows per keyed block.
    privatize_kwargs : mapping, optional
        Arguments passed on to the mechanism (``release=`` and others).

    Returns
    -------
    dict
        JSON data for :func:`~pydp_core.io.keys.release_id`.

    Raises
    ------
    ValueError
        If a mapping of mechanisms has no entry for a column, or the bounds are not valid.
    TypeError
        If the bounds are not a pair of numbers.

    Examples
    --------
    >>> import pydp_core as dp
    >>> from pydp_core import io
    >>> d1 = io.release_description(dp.LaplaceMechanism(epsilon=1.0), columns="x", bounds=(0, 1))
    >>> d2 = io.release_description(dp.LaplaceMechanism(epsilon=2.0), columns="x", bounds=(0, 1))
    >>> io.release_id(d1) != io.release_id(d2)
    True
    """
    cols = sorted({columns} if isinstance(columns, str) else set(columns))
    extra = {str(k): repr(v) for k, v in sorted((privatize_kwargs or {}).items())}
    per_column = {}
    for c in cols:
        mech = pick_column(mechanism, c, "mechanism")
        per_column[c] = {"mechanism": describe_mechanism(mech),
                         "bounds": _effective_bounds(mech, pick_column(bounds, c, "bounds", optional=True))}
    return {"kind": kind, "columns": per_column, "block_rows": int(block_rows), "mechanism_arguments": extra}


# -- the keyed block noise --------------------------------------------------------------------------------
class KeyedNoise:
    """Keyed, position-addressed noise for one column: a function of (key, column, global row) only.

    Row ``i`` gets the ``i mod B``-th value of block ``i // B``, drawn by one call of the mechanism's
    privatizer over the whole block from ``Random(column_key(key, column)).stream(i // B)``
    (docs/io.md); rows a call does not hold are padded with a placeholder and discarded.

    Parameters
    ----------
    mechanism : object
        A mechanism with ``privatize(values, rng=...)`` (:func:`privatizer`).
    key : bytes
        The 32-byte release key.
    column : str
        The column name, which labels its noise streams.
    bounds : (real, real), optional
        Clamp the values to ``[lower, upper]`` first.
    block_rows : int, optional
        Rows per keyed block B, in [1, 2**26] (default :data:`BLOCK_ROWS`); part of the definition of the
        noise, the same for every piece of a release.
    threads : int, optional
        Generator threads (``None``: all cores); the output does not depend on it.
    privatize_kwargs : mapping, optional
        Passed on to :func:`privatizer`.
    contributions : int, optional
        The most rows of one privacy unit in the column (default 1): the accountant is charged that many
        runs of the mechanism.
    release : str, optional
        The :func:`~pydp_core.io.keys.release_id` of the release this column belongs to (default: that of
        :func:`release_description` of this column alone); it keys the noise and labels the ledger's record.
    ledger : True, KeyLedger or SessionLedger, optional
        The use record of the key (:mod:`pydp_core.io.ledger`): True (the default) the key's ledger in
        the state directory, or a :class:`~pydp_core.io.ledger.KeyLedger` (e.g. the file beside a key file),
        which is consulted together with the key's state-directory ledger. Every piece is checked and recorded before its noise
        is drawn; there is no way to skip the record.
    accountant : Accountant, optional
        Charged once for the column (:meth:`pydp_core.AdditiveMechanism.charge`) before its first noise is
        drawn: when the ledger records the column's first piece, or at the first call without a ledger.
    sensitivity_holds : bool, optional
        Declare that the mechanism's sensitivity holds without bounds (:func:`release_bounds`).
    simulation : bool, optional
        Say that floating-point noise (``release=False``) is meant: no :class:`~pydp_core.PrivacyWarning`.

    Raises
    ------
    ValueError
        If the bounds and the sensitivity do not match (:func:`release_bounds`).
    KeyReuseError
        From :meth:`apply` / :meth:`apply_indexed`, for a piece that would reuse the key's noise on other
        values.

    Examples
    --------
    >>> import pydp_core as dp
    >>> from pydp_core import io
    >>> kn = io.KeyedNoise(dp.LaplaceMechanism(epsilon=1.0), bytes(range(32)), "age", block_rows=4,
    ...                    sensitivity_holds=True)
    >>> whole = kn.apply(np.zeros(6), 0)
    >>> bool(np.array_equal(whole, kn.apply(np.zeros(6), 0)))   # an exact repeat: the same output
    True
    >>> kn.apply(np.ones(3), 2)   # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    KeyReuseError: rows 2..4 of column 'age' were released under this key with other values ...
    """

    def __init__(
        self,
        mechanism: Any,
        key: bytes,
        column: str,
        *,
        bounds: Any = None,
        block_rows: int = BLOCK_ROWS,
        threads: int | None = None,
        privatize_kwargs: Mapping[str, Any] | None = None,
        release: str | None = None,
        contributions: int = 1,
        ledger: bool | KeyLedger | SessionLedger | _RecordedAtDriver = True,
        accountant: Any = None,
        sensitivity_holds: bool = False,
        simulation: bool = False,
    ) -> None:
        self.mechanism = check_mechanism(mechanism)
        if not isinstance(column, str):
            raise TypeError(f"column names must be strings, not {type(column).__name__}")
        self.column = column
        self.bounds = release_bounds(self.mechanism, bounds, column, sensitivity_holds)
        self.block_rows = check_int(block_rows, "block_rows", 1, 1 << 26)
        self.fill = 0.0 if self.bounds is None else self.bounds[0]
        kwargs = dict(privatize_kwargs or {})
        self.release = kwargs.get("release", True) is not False
        if not self.release and not simulation:
            privacy_warning(
                f"column {column!r}: release=False adds floating-point noise to a keyed release; it is not safe "
                "against least-significant-bit attacks (Mironov 2012). Pass simulation=True if this is a simulation"
            )
        self._privatize = privatizer(self.mechanism, kwargs)
        key = check_key(key)
        if release is None:
            release = release_id(release_description(self.mechanism, columns=column, bounds=self.bounds,
                                                      block_rows=self.block_rows, privatize_kwargs=kwargs))
        self.release_id = release
        self.contributions = check_int(contributions, "max_contributions", 1)
        # The stream is keyed by a secret release key, not by a public seed: label it secure.
        self._rng = _random_class().from_secret_key(column_key(release_key(key, release), column), threads=threads)
        self._ledger: KeyLedger | SessionLedger | None
        if ledger is True:
            self._ledger = ledger_for_key(key)
        elif ledger is _RECORDED_AT_DRIVER:
            self._ledger = None
        elif isinstance(ledger, (KeyLedger, SessionLedger)):
            self._ledger = ledger
        else:
            raise unrecorded_refused(ledger)
        self._accountant = accountant
        if accountant is not None:
            check_chargeable(self.mechanism)
        self._charged = False

    def _charge(self) -> None:
        if self._accountant is not None and not self._charged:
            for _ in range(self.contributions):  # a person's rows are that many releases (composition)
                self.mechanism.charge(self._accountant, release=self.release)
        self._charged = True

    def _claim(self, start: int, stop: int, digest: Any) -> None:
        """Check and record a piece in the ledger (charging the accountant for the column's first)."""
        if self._ledger is None:
            self._charge()
            return
        if stop > start:
            spent = {a: float(v) for a in ("epsilon", "delta") if isinstance(v := getattr(self.mechanism, a, None), (int, float))}
            status = self._ledger.claim(self.column, start, stop, digest(), on_first=self._charge,
                                        release=self.release_id, spent=spent)
            if status == "first":
                self._charged = True

    def _block(self, b: int, padded: np.ndarray) -> np.ndarray:
        out = self._privatize(padded, self._rng.stream(b))
        out = np.asarray(out, dtype=np.float64)
        if out.shape != padded.shape:
            raise RuntimeError(f"mechanism.privatize returned shape {out.shape} for input shape {padded.shape}")
        return out

    def apply(self, values: np.ndarray, start: int) -> np.ndarray:
        """Noisy ``values``, which hold the global rows ``start, start + 1, ...`` of the column.

        The piece is checked and recorded in the ledger first (:class:`KeyReuseError` if rows already
        released under the key would get other values).
        """
        values = prepared_values(values, self.bounds, self.column)
        n = values.shape[0]
        start = check_int(start, "offset", 0)
        self._claim(start, start + n, lambda: values_digest(values))
        B = self.block_rows
        if n == B and start % B == 0:  # exactly one keyed block (the streaming case): no copy
            return self._block(start // B, np.ascontiguousarray(values))
        out = np.empty(n, dtype=np.float64)
        if n == 0:
            return out
        for b in range(start // B, (start + n - 1) // B + 1):
            lo, hi = max(start, b * B), min(start + n, (b + 1) * B)
            if lo == b * B and hi == (b + 1) * B:
                out[lo - start : hi - start] = self._block(b, np.ascontiguousarray(values[lo - start : hi - start]))
            else:
                padded = np.full(B, self.fill)
                padded[lo - b * B : hi - b * B] = values[lo - start : hi - start]
                out[lo - start : hi - start] = self._block(b, padded)[lo - b * B : hi - b * B]
        return out

    def apply_indexed(self, values: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Noisy ``values`` at the distinct global rows ``rows`` (any order, any gaps).

        The ledger records the id range ``[min, max + 1)`` with the digest of (ids, values): a second piece
        of row ids must lie in a disjoint id range (or repeat the piece exactly).
        """
        values = prepared_values(values, self.bounds, self.column)
        rows = np.asarray(rows)
        if rows.dtype.kind not in "iu" or rows.shape != values.shape:
            raise TypeError("row indices must be an integer array of the same length as the values")
        rows = rows.astype(np.int64)
        if rows.size and rows.min() < 0:
            raise ValueError("row indices must be >= 0")
        out = np.empty(values.shape[0], dtype=np.float64)
        if rows.size == 0:
            return out
        order = np.argsort(rows, kind="stable")
        srt = rows[order]
        if np.any(srt[1:] == srt[:-1]):
            raise ValueError(f"row indices of column {self.column!r} are not unique")
        # The piece covers the id range [min, max + 1); its digest is of (ids, values) in id order, so the
        # same rows in another order are the same piece.
        self._claim(int(srt[0]), int(srt[-1]) + 1, lambda: values_digest(values[order], srt))
        B = self.block_rows
        blocks = srt // B
        cuts = np.flatnonzero(np.diff(blocks)) + 1
        for seg in np.split(np.arange(srt.size), cuts):
            b = int(blocks[seg[0]])
            pos = srt[seg] - b * B
            idx = order[seg]
            padded = np.full(B, self.fill)
            padded[pos] = values[idx]
            out[idx] = self._block(b, padded)[pos]
        return out


def prepared_values(values: np.ndarray, bounds: tuple[float, float] | None, column: str) -> np.ndarray:
    """float64 values, clamped to ``bounds`` when given; NaN (always) and inf without bounds are errors."""
    arr = np.asarray(values)
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise TypeError(f"column {column!r} must be numeric (got dtype {arr.dtype})")
    if arr.ndim != 1:
        raise ValueError(f"column {column!r} must be one-dimensional")
    if arr.dtype.kind in "iu":
        f = arr.astype(np.float64)
        if f.size and np.any(np.abs(f) >= 2.0**53) and not np.array_equal(f.astype(arr.dtype), arr):
            raise ValueError(f"column {column!r} has integers too large to convert to float64 exactly")
        arr = f
    else:
        arr = arr.astype(np.float64, copy=False)
    # NaN is refused with or without bounds (clamping cannot give it a value); infinities are clamped to bounds.
    if np.isnan(arr).any():
        raise ValueError(
            f"column {column!r} has NaN values: store missing values as nulls (NaN is refused even with bounds, "
            "since clamping cannot give it a value)"
        )
    if bounds is None:
        if not np.isfinite(arr).all():
            raise ValueError(f"column {column!r} has infinite values: give bounds=(lower, upper) to clamp them")
        return arr
    return np.clip(arr, bounds[0], bounds[1])
