"""Empirical privacy audit: show, by experiment, that a release keeps its ε (or that it does not).

Run a mechanism many times, release-grade, on two neighbouring inputs; find the event that best tells
the two output distributions apart; and bound ε from below with Clopper–Pearson confidence (Ding et al.
2018; Bichsel et al. 2021; Jagielski et al. 2020). A bound above the claimed ε refutes the claim.

>>> from dpdash.audit import audit, mechanism_target
>>> from dpdash.mechanisms import Geometric
>>> result = audit(mechanism_target(Geometric(epsilon=1.0, sensitivity=1), 0, 1), trials=100_000)
>>> result.refutes_claim, result.epsilon_lower > 0.8
(False, True)
"""

from dpdash.audit.bounds import (
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_bounds,
    epsilon_lower_bound,
)
from dpdash.audit.events import Binning, Event, best_event
from dpdash.audit.neighbours import Neighbour, worst_case_neighbour
from dpdash.audit.run import AuditResult, AuditRun, audit
from dpdash.audit.targets import AuditTarget, mechanism_target, min_eigenvalue, query_target

__all__ = [
    "AuditResult",
    "AuditRun",
    "AuditTarget",
    "Binning",
    "Event",
    "Neighbour",
    "audit",
    "best_event",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "epsilon_bounds",
    "epsilon_lower_bound",
    "mechanism_target",
    "min_eigenvalue",
    "query_target",
    "worst_case_neighbour",
]
