"""Privacy accounting, the mathematics of privacy loss: events as data, accountants as strategies, running
composition and planning. Nothing here stores anything: the persistent budget ledger is ``dpdash.ledger``,
which uses this package (never the reverse).

- ``events``: one frozen event per release (``event_for(mechanism, query=...)``), JSON-able.
- Accountants (``get_accountant(name)``): ``basic``, ``advanced`` (Dwork–Rothblum–Vadhan), ``optimal``
  (Kairouz–Oh–Viswanath), ``zcdp`` (with the Canonne–Kamath–Steinke conversion), ``rdp`` and ``pld`` (via
  Google's dp_accounting), and ``tightest`` (the minimum of them all). Each answers "total ε at δ" and
  "total δ at ε" for a list of events; group privacy applies to any total.
- ``running``: a growing history's composed state, so that a new release composes only what is new.
- ``Budget`` and planning: ``plan`` (PSI-style allocation of what remains), ``what_if``, ``max_releases``.

>>> from dpdash import Laplace
>>> events = [event_for(Laplace(epsilon=0.1, sensitivity=1.0), query="count")] * 10
>>> get_accountant("basic").epsilon(events, target_delta=1e-6)
1.0
>>> round(get_accountant("optimal").epsilon(events, target_delta=1e-6), 4)
0.9994
"""

from dpdash.accounting.accountant import Accountant, PrivacyTotal, group_privacy
from dpdash.accounting.advanced import AdvancedComposition, drv_epsilon
from dpdash.accounting.basic import BasicComposition
from dpdash.accounting.budget import Budget
from dpdash.accounting.event_factory import event_for, event_from_dict, events_for_release
from dpdash.accounting.events import (
    ApproxDPEvent,
    DiscreteGaussianEvent,
    GaussianEvent,
    GeometricEvent,
    LaplaceEvent,
    NonPrivateEvent,
    PrivacyEvent,
    PureDPEvent,
    ZCDPEvent,
)
from dpdash.accounting.optimal import OptimalComposition, kov_delta, kov_epsilon
from dpdash.accounting.planning import (
    Plan,
    PlannedQuery,
    PlannedRelease,
    WhatIf,
    cumulative_totals,
    max_releases,
    plan,
    what_if,
)
from dpdash.accounting.pld import PLDAccountant
from dpdash.accounting.rdp import RDPAccountant
from dpdash.accounting.registry import ACCOUNTANT_NAMES, clear_caches, get_accountant
from dpdash.accounting.tightest import TightestAccountant
from dpdash.accounting.zcdp import ZCDPAccountant, zcdp_delta, zcdp_epsilon
from dpdash.errors import BudgetExceededError, UnsupportedEventError

__all__ = [
    "ACCOUNTANT_NAMES",
    "Accountant",
    "AdvancedComposition",
    "ApproxDPEvent",
    "BasicComposition",
    "Budget",
    "BudgetExceededError",
    "DiscreteGaussianEvent",
    "GaussianEvent",
    "GeometricEvent",
    "LaplaceEvent",
    "NonPrivateEvent",
    "OptimalComposition",
    "PLDAccountant",
    "Plan",
    "PlannedQuery",
    "PlannedRelease",
    "PrivacyEvent",
    "PrivacyTotal",
    "PureDPEvent",
    "RDPAccountant",
    "TightestAccountant",
    "UnsupportedEventError",
    "WhatIf",
    "ZCDPAccountant",
    "ZCDPEvent",
    "clear_caches",
    "cumulative_totals",
    "drv_epsilon",
    "event_for",
    "event_from_dict",
    "events_for_release",
    "get_accountant",
    "group_privacy",
    "kov_delta",
    "kov_epsilon",
    "max_releases",
    "plan",
    "what_if",
    "zcdp_delta",
    "zcdp_epsilon",
]
