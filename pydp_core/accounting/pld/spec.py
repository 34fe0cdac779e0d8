"""A PLD from a JSON-style description: the schema of ``pydp-core compose`` and of the accountant.

``PLD.from_spec`` documents the schema and delegates here; every field is checked before a
constructor is called, so a malformed description fails with one ValueError naming the field.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...noise import Truncated, from_name

if TYPE_CHECKING:
    from .core import PLD

# The mechanism kinds, and the fields of a noise entry.
# Batch samplers: {"fixed_size": {"noise": "gaussian", "scale": ..., ...}} calls PLD.fixed_size and so on.
_BATCHES = ("fixed_size", "truncated_poisson", "balls_in_bins", "b_min_sep")
_KINDS = ("noise", "gdp", "approx_dp", "randomized_response", "discrete_laplace", "discrete_gaussian",
          "mixture_of_gaussians", "banded_matrix_factorization", "random_allocation") + _BATCHES
_NOISE_FIELDS = {"scale", "sensitivity", "sampling_rate", "r", "bound"}


# Kinds whose entry is the keyword arguments of one constructor (the kind -> the constructor's name), and
# kinds whose keyword arguments also name a noise family ("noise", with "r" for the Subbotin).
_KEYWORD_KINDS = {"approx_dp": "from_approx_dp", "randomized_response": "from_randomized_response",
                  "discrete_laplace": "from_discrete_laplace", "discrete_gaussian": "from_discrete_gaussian",
                  "mixture_of_gaussians": "from_mixture_of_gaussians",
                  "banded_matrix_factorization": "from_banded_matrix_factorization"}
_FAMILY_KINDS = {"random_allocation": "random_allocation", **{k: k for k in _BATCHES}}
_DISCRETE_ALLOCATION = ("discrete_laplace", "discrete_gaussian")  # also noise names of random_allocation


def _kind(spec: Any) -> str:
    """The one mechanism kind ``spec`` names, its fields checked."""
    if not isinstance(spec, dict):
        raise ValueError(f"spec must be a JSON object (dict), not {type(spec).__name__}")
    extra = set(spec) - {*_KINDS, *_NOISE_FIELDS, "count"}
    if extra:
        raise ValueError(f"spec has unknown fields {sorted(extra)}")
    named = [k for k in _KINDS if k in spec]
    if len(named) != 1:
        raise ValueError(f"spec must name exactly one mechanism ({', '.join(_KINDS)}), got {named}")
    kind = named[0]
    if kind != "noise" and set(spec) & _NOISE_FIELDS:
        raise ValueError(f"the fields scale, sensitivity, sampling_rate, r and bound belong to noise entries, not {kind}")
    return kind


def _noise_entry(cls: type[PLD], spec: dict[str, Any]) -> PLD:
    fam = from_name(spec["noise"], spec.get("r"), name_arg="noise")
    if "scale" not in spec:
        raise ValueError("a noise entry needs a scale")
    args = dict(scale=spec["scale"], sensitivity=spec.get("sensitivity", 1.0),
                sampling_rate=spec.get("sampling_rate", 1.0))
    return cls.from_density(Truncated(fam, spec["bound"]), **args) if "bound" in spec else cls.from_noise(fam, **args)


def _from_spec(cls: type[PLD], spec: Any) -> PLD:
    """The PLD ``spec`` describes, built with the constructors of ``cls`` (see ``PLD.from_spec``)."""
    kind = _kind(spec)

    def fields(value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise ValueError(f"spec[{kind!r}] must be a JSON object of keyword arguments")
        return dict(value)

    pld: PLD
    if kind == "noise":
        pld = _noise_entry(cls, spec)
    elif kind == "gdp":
        pld = cls.from_gdp(spec["gdp"])
    elif kind in _KEYWORD_KINDS:
        pld = getattr(cls, _KEYWORD_KINDS[kind])(**fields(spec[kind]))
    else:
        args = fields(spec[kind])
        if "noise" not in args:
            raise ValueError(f"spec[{kind!r}] needs a noise family (\"gaussian\", \"laplace\", ...)")
        name = args.pop("noise")
        if kind == "random_allocation" and name in _DISCRETE_ALLOCATION and "r" not in args:
            fam: Any = name  # the discrete families go to random allocation by name
        else:
            fam = from_name(name, args.pop("r", None), name_arg=f"spec[{kind!r}]['noise']")
        pld = getattr(cls, _FAMILY_KINDS[kind])(fam, **args)
    count = spec.get("count", 1)
    return pld if count == 1 else pld.self_compose(count)
