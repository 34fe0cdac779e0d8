"""Opacus: an accountant backed by pydp_core's certified PLDs, and Gaussian noise from the ChaCha20 CSPRNG.

**Accountant.** :class:`PLDAccountant` implements Opacus's accountant interface
(``opacus.accountants.IAccountant``: ``step(noise_multiplier=, sample_rate=)``, ``get_epsilon(delta)``,
``len()``, ``mechanism()``, ``history``, ``state_dict``/``load_state_dict``). Each step is the Poisson
subsampled Gaussian mechanism (add/remove neighbours, sensitivity 1 in units of ``max_grad_norm``), and the
steps are composed exactly by the certified PLD (:class:`pydp_core.accounting.pld.PLD`; docs/pld.md):
``get_epsilon`` returns the upper end of the certified interval, refined until it is at most 1e-5 wide.
Importing this module registers the accountant with Opacus under the name ``"pydp_core"``, which is how
Opacus's ``PrivacyEngine`` takes an accountant (by name)::

    import pydp_core.adapters.opacus
    engine = opacus.PrivacyEngine(accountant="pydp_core")

``make_private_with_epsilon`` then calibrates the noise multiplier with this accountant too.

**Samplers.** ``PLDAccountant(sampler=...)`` declares how the batches are drawn; Opacus reports each step
as ``step(noise_multiplier=, sample_rate=)`` with ``sample_rate`` = 1 / (steps per epoch) in every case:

- ``"poisson"`` (the default; Opacus's ``DPDataLoader``): every step is the Poisson-subsampled Gaussian;
- ``"random_allocation"``: each record is used in one uniformly chosen step of each epoch of
  t = 1 / ``sample_rate`` steps, every epoch one pass of
  :meth:`PLD.random_allocation <pydp_core.accounting.pld.PLD.random_allocation>`;
- ``"shuffle"`` (a ``DataLoader(shuffle=True)`` without Poisson sampling): each epoch a random
  permutation cut into t batches; certified upper end without amplification (one Gaussian step per
  epoch), lower end from :func:`~pydp_core.accounting.pld.shuffle.shuffle_pld_lower` (every epoch
  reshuffled).

For the epoch-based samplers ``1 / sample_rate`` must be an integer and stay the same, and an epoch whose
steps used several noise multipliers is bounded above with the smallest and below with the largest (more
noise is a post-processing). A last, incomplete epoch counts as a full one in the upper end and as
nothing in the lower end. :meth:`PLDAccountant.check_data_loader` refuses a data loader whose sampler is
not the declared one (``"fixed_size"`` batches are not accounted here: the accountant refuses them).

**Noise.** :func:`gaussian_noise_like` and :func:`add_gaussian_noise_` draw Gaussian noise for CPU torch
tensors (float32 and float64 natively; float16 and bfloat16 through float32) from pydp_core's ChaCha20
generator (:class:`pydp_core.Random`), which is cryptographically secure, unlike torch's default
generator. :class:`SecureNoise` plugs it into Opacus's optimizers: pass it as
``make_private(..., noise_generator=SecureNoise())``. Opacus's optimizers draw their noise through the
module function ``opacus.optimizers.optimizer._generate_noise(std, reference, generator, secure_mode)``;
creating a :class:`SecureNoise` replaces that function (in the optimizer modules that use it) by one that
draws from pydp_core when the optimizer's generator is a :class:`SecureNoise` and calls Opacus's own
function otherwise, so other optimizers are unaffected.

Opacus refuses a ``noise_generator`` together with ``PrivacyEngine(secure_mode=True)`` (its secure mode
needs torchcsprng and draws with it); use :class:`SecureNoise` with ``secure_mode=False``.

Scope: the noise is floating-point Gaussian noise, like Opacus's. Its source is secure; its floating-point
representation is not hardened against least-significant-bit attacks (Mironov 2012), which Opacus's
``secure_mode`` addresses by summing several draws. The Poisson sampling of Opacus's data loader still uses
torch's generator.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._safety import check_release_rng
from .._validation import check_delta, check_nonneg_scalar, check_probability, require_extra
from ..accounting.pld import PLD, Interval
from ..accounting.pld.shuffle import shuffle_pld_lower
from ..noise import Gaussian
from ..random import Random, as_random
from ._refine import epsilon_of

torch, _opacus_accountants, _opacus_registry = require_extra(
    "peers", "torch", "opacus.accountants", "opacus.accountants.registry"
)

__all__ = ["PLDAccountant", "MECHANISM", "SAMPLERS", "loader_sampler", "gaussian_noise_like", "add_gaussian_noise_",
           "SecureNoise"]

#: The accountant's name in Opacus's registry (``PrivacyEngine(accountant=MECHANISM)``).
MECHANISM = "pydp_core"
#: The batch samplers :class:`PLDAccountant` accounts.
SAMPLERS = ("poisson", "random_allocation", "shuffle")


class PLDAccountant(_opacus_accountants.IAccountant):  # type: ignore[misc,name-defined]
    """Opacus's accountant interface, backed by pydp_core's certified privacy-loss distributions.

    ``history`` holds ``(noise_multiplier, sample_rate, steps)`` entries, as Opacus's own accountants
    keep it; consecutive steps with the same parameters share an entry.

    Parameters
    ----------
    sampler : {"poisson", "random_allocation", "shuffle"}, optional
        How the batches are drawn (module docstring, "Samplers"); Opacus creates the accountant with the
        default, Poisson sampling.

    Examples
    --------
    >>> from pydp_core.adapters.opacus import PLDAccountant
    >>> acc = PLDAccountant()
    >>> for _ in range(1000):
    ...     acc.step(noise_multiplier=1.0, sample_rate=0.01)
    >>> len(acc), acc.history
    (1000, [(1.0, 0.01, 1000)])
    >>> round(acc.get_epsilon(1e-5), 4)
    1.8282
    """

    def __init__(self, sampler: str = "poisson") -> None:
        if not isinstance(sampler, str):
            raise TypeError(f"sampler must be a string, got {type(sampler).__name__}")
        if sampler not in SAMPLERS:
            raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
        self.sampler = sampler
        self.history: list[tuple[float, float, int]] = []
        self._cache: dict[tuple[Any, ...], Interval] = {}

    def check_data_loader(self, data_loader: Any) -> None:
        """Refuse a data loader whose batch sampler is not the declared :attr:`sampler`.

        Opacus's ``DPDataLoader`` (``UniformWithReplacementSampler``) is Poisson sampling; a torch
        ``DataLoader`` over a ``RandomSampler`` without replacement cut into batches is shuffling.

        Raises
        ------
        ValueError
            If the loader's sampler is another kind than :attr:`sampler`, or one this accountant cannot
            identify.
        """
        found = loader_sampler(data_loader)
        if found != self.sampler:
            raise ValueError(f"the data loader draws its batches by {found!r} sampling, but the accountant was "
                             f"declared with sampler={self.sampler!r}: account the sampler that runs")

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """Record one step of DP-SGD: Poisson sampling at ``sample_rate``, noise ``noise_multiplier``.

        Parameters
        ----------
        noise_multiplier : float
            The noise standard deviation in units of the clipping norm (>= 0; 0 is not private).
        sample_rate : float
            The Poisson sampling rate in [0, 1].

        Raises
        ------
        ValueError, TypeError
            For a negative, non-finite or non-real argument.
        """
        nm = check_nonneg_scalar(noise_multiplier, "noise_multiplier")
        q = float(check_probability(sample_rate, "sample_rate"))
        if self.sampler != "poisson":
            _epoch_steps(q)
            if self.history and self.history[0][1] != q:
                raise ValueError(f"sample_rate changed from {self.history[0][1]} to {q} under sampler="
                                 f"{self.sampler!r}: the epoch length 1 / sample_rate must stay the same")
        if self.history and self.history[-1][:2] == (nm, q):
            self.history[-1] = (nm, q, self.history[-1][2] + 1)
        else:
            self.history.append((nm, q, 1))

    def __len__(self) -> int:
        return sum(int(steps) for _, _, steps in self.history)

    @classmethod
    def mechanism(cls) -> str:
        """The name under which Opacus knows this accountant (:data:`MECHANISM`)."""
        return MECHANISM

    def pld(self) -> PLD | None:
        """The PLD of the steps so far (the identity before any step); None if a step had no noise.

        Poisson sampling only: the epoch-based samplers have their two ends from two PLDs
        (:meth:`get_epsilon_interval` combines them).
        """
        if self.sampler != "poisson":
            raise ValueError(f"pld() is the Poisson analysis; with sampler={self.sampler!r} use get_epsilon_interval")
        out = PLD.identity()
        for nm, q, steps in self.history:
            if int(steps) <= 0 or q == 0.0:
                continue
            if nm == 0.0:
                return None
            out = out.compose(PLD.from_noise(Gaussian(), scale=nm, sensitivity=1.0, sampling_rate=q).self_compose(int(steps)))
        return out

    def get_epsilon_interval(self, delta: float, *, tolerance: float | None = None) -> Interval:
        """Certified bounds on the epsilon spent so far at ``delta``.

        Parameters
        ----------
        delta : float
            delta in [0, 1].
        tolerance : float, optional
            The interval is refined to at most this width (default 1e-5) where the grid allows.

        Returns
        -------
        Interval
            ``lower <= epsilon <= upper``; ``(0, 0)`` before any step, ``(inf, inf)`` after a step
            without noise.
        """
        dl = float(check_delta(delta, "delta", allow_one=True))
        key = (tuple(tuple(entry) for entry in self.history), dl, tolerance)
        if key not in self._cache:
            if not any(int(s) > 0 and q > 0 for _, q, s in self.history):
                iv = Interval(0.0, 0.0)
            elif self.sampler != "poisson":
                iv = _epoch_interval(self.sampler, self.history, dl, tolerance)
            else:
                pld = self.pld()
                iv = Interval(math.inf, math.inf) if pld is None else epsilon_of(pld, dl, tolerance)
            self._cache = {key: iv}
        return self._cache[key]

    def get_epsilon(self, delta: float, *args: Any, tolerance: float | None = None, **kwargs: Any) -> float:
        """The certified epsilon spent so far at ``delta`` (the upper end of :meth:`get_epsilon_interval`).

        Other arguments that Opacus passes to its own accountants (``eps_error``, ...) are ignored.

        Parameters
        ----------
        delta : float
            delta in [0, 1].
        tolerance : float, optional
            As in :meth:`get_epsilon_interval`.

        Returns
        -------
        float
            epsilon, rounded up (a certified upper bound).
        """
        return float(self.get_epsilon_interval(delta, tolerance=tolerance).upper)


_opacus_registry.register_accountant(MECHANISM, PLDAccountant, force=True)


def _epoch_steps(q: float) -> int:
    """The steps of an epoch, 1 / q, which must be an integer."""
    if not q > 0.0:
        raise ValueError("sample_rate must be > 0 for an epoch-based sampler (1 / sample_rate steps per epoch)")
    t = round(1.0 / q)
    if abs(t * q - 1.0) > 1e-9:
        raise ValueError(f"1 / sample_rate must be an integer (the steps of an epoch) for an epoch-based "
                         f"sampler, got sample_rate={q}")
    return t


def _epochs(history: list[tuple[float, float, int]]) -> tuple[list[tuple[float, float]], bool]:
    """The (smallest, largest) noise multiplier of each epoch, and whether the last one is incomplete."""
    t = _epoch_steps(history[0][1])
    out: list[tuple[float, float]] = []
    filled = t
    for nm, _, steps in history:
        for _ in range(int(steps)):
            if filled == t:
                out.append((nm, nm))
                filled = 0
            lo, hi = out[-1]
            out[-1] = (min(lo, nm), max(hi, nm))
            filled += 1
    return out, filled < t


def _epoch_pld(sampler: str, nm: float, t: int, pessimistic: bool) -> PLD:
    """The PLD of one epoch: its upper ends (``pessimistic``) or its lower ends are the bounds."""
    if sampler == "random_allocation":
        return PLD.random_allocation(Gaussian(), scale=nm, steps=t)
    if pessimistic:  # shuffling: one Gaussian step per epoch, no amplification
        return PLD.from_noise(Gaussian(), scale=nm)
    return PLD([(shuffle_pld_lower(sigma=nm, steps=t), 1)])


def _epoch_interval(sampler: str, history: list[tuple[float, float, int]], delta: float,
                    tolerance: float | None) -> Interval:
    """The certified epsilon interval of the epoch-based ``sampler`` over the steps of ``history``."""
    t = _epoch_steps(history[0][1])
    epochs, partial = _epochs(history)
    # upper end: every epoch at its smallest multiplier; lower end: the complete epochs at their largest
    upper_nm = [lo for lo, _ in epochs]
    lower_nm = [hi for _, hi in (epochs[:-1] if partial else epochs)]
    ends = []
    for pessimistic, nms in ((True, upper_nm), (False, lower_nm)):
        if 0.0 in nms:
            ends.append(math.inf)
            continue
        if not nms:
            ends.append(0.0)
            continue
        pld = PLD.identity()
        for nm in sorted(set(nms)):
            pld = pld.compose(_epoch_pld(sampler, nm, t, pessimistic).self_compose(nms.count(nm)))
        iv = epsilon_of(pld, delta, tolerance)
        ends.append(float(iv.upper if pessimistic else iv.lower))
    return Interval(ends[1], ends[0])


def loader_sampler(data_loader: Any) -> str:
    """The sampler kind of a torch / Opacus data loader: "poisson", "shuffle" or "fixed_size".

    Parameters
    ----------
    data_loader : torch.utils.data.DataLoader
        The loader (Opacus's ``DPDataLoader`` included).

    Returns
    -------
    str
        "poisson" for Opacus's uniform-with-replacement (Poisson) batch samplers, "shuffle" for batches of a
        ``RandomSampler`` without replacement, "fixed_size" for batches of one with replacement.

    Raises
    ------
    ValueError
        If the loader draws its batches in a way none of the kinds describes (a fixed order, a custom
        sampler).

    Examples
    --------
    >>> import torch
    >>> from torch.utils.data import DataLoader, TensorDataset
    >>> loader_sampler(DataLoader(TensorDataset(torch.zeros(8)), batch_size=2, shuffle=True))
    'shuffle'
    """
    from opacus.utils.uniform_sampler import DistributedUniformWithReplacementSampler, UniformWithReplacementSampler
    from torch.utils.data import BatchSampler, RandomSampler

    batches = getattr(data_loader, "batch_sampler", None)
    if isinstance(batches, (UniformWithReplacementSampler, DistributedUniformWithReplacementSampler)):
        return "poisson"
    if isinstance(batches, BatchSampler) and isinstance(batches.sampler, RandomSampler):
        return "fixed_size" if batches.sampler.replacement else "shuffle"
    raise ValueError(f"data_loader draws its batches with {type(batches).__name__}"
                     f"({type(getattr(batches, 'sampler', None)).__name__}): not a sampler this accountant knows")


# ------------------------------------------------------------------------------------------------------
# Secure Gaussian noise for torch tensors
# ------------------------------------------------------------------------------------------------------
_NATIVE = {torch.float32: np.float32, torch.float64: np.float64}
_VIA_FLOAT32 = (torch.float16, torch.bfloat16)


def _check_tensor(t: Any, name: str) -> None:
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch tensor, not {type(t).__name__}")
    if t.device.type != "cpu":
        raise ValueError(f"{name} is on {t.device}: the noise is drawn on the CPU; pass a CPU tensor")
    if t.dtype not in _NATIVE and t.dtype not in _VIA_FLOAT32:
        raise TypeError(f"{name} must have a floating dtype (float32, float64, float16, bfloat16), not {t.dtype}")


def gaussian_noise_like(reference: Any, std: float, *, rng: Any = None, simulation: bool = False) -> Any:
    """A new tensor of N(0, std^2) noise with ``reference``'s shape and dtype, from the ChaCha20 CSPRNG.

    Parameters
    ----------
    reference : torch.Tensor
        A CPU tensor of a floating dtype: float32 and float64 are drawn natively, float16 and bfloat16 are
        drawn in float32 and rounded.
    std : float
        The standard deviation (>= 0).
    rng : None or Random, optional
        ``None`` (the default): a fresh secure :class:`pydp_core.Random`; a seeded generator (or a numpy
        generator) only with ``simulation=True``.
    simulation : bool, optional
        Allow a reproducible ``rng`` (tests and simulations, not training on private data).

    Returns
    -------
    torch.Tensor
        The noise (owning its memory, shared with the numpy array it was drawn into).

    Raises
    ------
    TypeError
        If ``reference`` is not a tensor of a floating dtype.
    ValueError
        If ``reference`` is not on the CPU, ``std`` is negative or not finite, or ``rng`` is reproducible
        without ``simulation``.

    Examples
    --------
    >>> import torch
    >>> import pydp_core as dp
    >>> from pydp_core.adapters.opacus import gaussian_noise_like
    >>> z = gaussian_noise_like(torch.zeros(3, 2), 0.5, rng=dp.Random(1), simulation=True)
    >>> z.shape, z.dtype
    (torch.Size([3, 2]), torch.float32)
    """
    _check_tensor(reference, "reference")
    s = check_nonneg_scalar(std, "std")
    check_release_rng(rng, simulation)
    gen = as_random(rng)
    dt = _NATIVE.get(reference.dtype, np.float32)
    draws = gen.normal(0.0, s, size=tuple(reference.shape), dtype=dt)
    noise = torch.from_numpy(np.asarray(draws))
    return noise if noise.dtype == reference.dtype else noise.to(reference.dtype)


def add_gaussian_noise_(tensor: Any, std: float, *, rng: Any = None, simulation: bool = False) -> Any:
    """Add N(0, std^2) noise from the ChaCha20 CSPRNG to ``tensor`` in place, and return it.

    Parameters
    ----------
    tensor : torch.Tensor
        A CPU tensor of a floating dtype (as in :func:`gaussian_noise_like`).
    std : float
        The standard deviation (>= 0).
    rng, simulation :
        As in :func:`gaussian_noise_like`.

    Returns
    -------
    torch.Tensor
        ``tensor`` itself.

    Raises
    ------
    TypeError, ValueError
        As in :func:`gaussian_noise_like`.

    Examples
    --------
    >>> import torch
    >>> import pydp_core as dp
    >>> from pydp_core.adapters.opacus import add_gaussian_noise_
    >>> g = torch.ones(4, dtype=torch.float64)
    >>> add_gaussian_noise_(g, 1e-3, rng=dp.Random(2), simulation=True) is g
    True
    """
    noise = gaussian_noise_like(tensor, std, rng=rng, simulation=simulation)
    with torch.no_grad():
        tensor.add_(noise)
    return tensor


class SecureNoise:
    """A ``noise_generator`` for Opacus that draws the DP-SGD noise from pydp_core's ChaCha20 CSPRNG.

    Pass it to ``PrivacyEngine.make_private(..., noise_generator=SecureNoise())`` (or set it as a
    ``DPOptimizer``'s ``generator``). Creating one installs the dispatch described in the module
    docstring (once per process).

    Parameters
    ----------
    rng : None or Random, optional
        ``None`` (the default): a fresh secure generator; a reproducible one only with ``simulation=True``.
    simulation : bool, optional
        Allow a reproducible ``rng`` (tests and simulations).

    Raises
    ------
    ValueError
        If ``rng`` is reproducible without ``simulation``.

    Examples
    --------
    >>> from pydp_core.adapters.opacus import SecureNoise
    >>> SecureNoise()
    SecureNoise(Random(secure, threads=None))
    """

    def __init__(self, rng: Any = None, *, simulation: bool = False) -> None:
        check_release_rng(rng, simulation)
        self.rng: Random = as_random(rng)
        self.simulation = simulation
        _install_dispatch()

    def noise_like(self, reference: Any, std: float) -> Any:
        """N(0, std^2) noise shaped like ``reference`` (:func:`gaussian_noise_like`)."""
        return gaussian_noise_like(reference, std, rng=self.rng, simulation=True)

    def __repr__(self) -> str:
        return f"SecureNoise({self.rng!r})"


def _install_dispatch() -> None:
    """Route Opacus's ``_generate_noise`` to :class:`SecureNoise` generators (idempotent)."""
    import importlib

    base = importlib.import_module("opacus.optimizers.optimizer")
    original = getattr(base._generate_noise, "_pydp_original", base._generate_noise)
    if getattr(base._generate_noise, "_pydp_original", None) is not None:
        return

    def _generate_noise(std: float, reference: Any, generator: Any = None, secure_mode: bool = False) -> Any:
        if isinstance(generator, SecureNoise):
            return generator.noise_like(reference, std)
        return original(std=std, reference=reference, generator=generator, secure_mode=secure_mode)

    _generate_noise._pydp_original = original  # type: ignore[attr-defined]
    for name in ("opacus.optimizers.optimizer", "opacus.optimizers.optimizer_fast_gradient_clipping",
                 "opacus.optimizers.fsdpoptimizer_fast_gradient_clipping"):
        try:
            module = importlib.import_module(name)
        except ImportError:  # optional parts of Opacus (FSDP needs torch.distributed)
            continue
        if getattr(module, "_generate_noise", None) is original:
            setattr(module, "_generate_noise", _generate_noise)  # noqa: B010 (not a declared attribute)
