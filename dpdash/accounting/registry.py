"""The accountants by name, as ledgers and the app refer to them."""

from __future__ import annotations

import functools

from dpdash.accounting.accountant import Accountant
from dpdash.accounting.advanced import AdvancedComposition
from dpdash.accounting.basic import BasicComposition
from dpdash.accounting.optimal import OptimalComposition
from dpdash.accounting.pld import PLDAccountant
from dpdash.accounting.rdp import RDPAccountant
from dpdash.accounting.tightest import TightestAccountant
from dpdash.accounting.zcdp import ZCDPAccountant
from dpdash.errors import ParameterError, ParameterTypeError

__all__ = ["ACCOUNTANT_NAMES", "clear_caches", "default_components", "get_accountant"]

# In the order the app shows them: loosest first, the tightest last.
ACCOUNTANT_NAMES = ("basic", "advanced", "optimal", "zcdp", "rdp", "pld", "tightest")

_CLASSES: dict[str, type[Accountant]] = {
    "basic": BasicComposition,
    "advanced": AdvancedComposition,
    "optimal": OptimalComposition,
    "zcdp": ZCDPAccountant,
    "rdp": RDPAccountant,
    "pld": PLDAccountant,
    "tightest": TightestAccountant,
}


@functools.cache
def get_accountant(name: str) -> Accountant:
    """The shared accountant called ``name`` (one of ``ACCOUNTANT_NAMES``), with default settings.

    >>> get_accountant("basic").title
    'Basic composition'
    """
    if not isinstance(name, str):
        raise ParameterTypeError(f"accountant must be one of {ACCOUNTANT_NAMES}, got accountant={name!r}")
    if name not in _CLASSES:
        raise ParameterError(f"accountant must be one of {ACCOUNTANT_NAMES}, got accountant={name!r}")
    if name == "tightest":
        return TightestAccountant(default_components())
    return _CLASSES[name]()


def default_components() -> list[Accountant]:
    """The accountants the tightest one takes the minimum over."""
    return [get_accountant(name) for name in ACCOUNTANT_NAMES if name != "tightest"]


def clear_caches() -> None:
    """Forget every cached total, Rényi curve, privacy loss distribution, FFT spectrum and running state.

    Answers never depend on the caches (they only hold results of deterministic computations); this frees
    their memory, and lets a benchmark measure cold times.
    """
    from dpdash.accounting import accountant, optimal, pld, rdp, running

    accountant.Accountant._epsilon_cached.cache_clear()
    accountant.Accountant._delta_cached.cache_clear()
    accountant._sort_key.cache_clear()
    accountant._split_cached.cache_clear()
    rdp._setting_curve.cache_clear()
    pld._built.cache_clear()
    pld._moments.cache_clear()
    pld._COMPOSER.clear()
    optimal.kov_epsilon_cached.cache_clear()
    running.clear()
