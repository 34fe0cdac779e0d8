"""The command line offers exactly the noise families that ``pydp_core.noise.from_name`` parses."""
from __future__ import annotations

import re

import pytest

from pydp_core.cli._args import FAMILIES
from pydp_core.noise import NAMES, from_name


def test_cli_names_are_the_noise_names():
    assert FAMILIES == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_every_name_parses_to_a_family_that_names_itself(name):
    fam = from_name(name, 1.5 if name == "subbotin" else None)
    assert fam.spec_name == name


@pytest.mark.parametrize("name, r, match", [
    ("cauchy", None, "noise must be one of"),
    ("subbotin", None, "--r is required"),
    ("laplace", 1.5, "--r is required for subbotin noise (its order r) and allowed only there, not with laplace"),
    ("subbotin", 0.5, "r"),
])
def test_bad_names_and_orders_are_value_errors_naming_the_argument(name, r, match):
    with pytest.raises(ValueError, match=re.escape(match)):
        from_name(name, r, name_arg="noise", r_arg="--r")
