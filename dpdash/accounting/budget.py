"""A privacy budget: the (ε, δ) a dataset may spend in all, what accountants compose against and planners
allocate; the ledger keeps one per dataset."""

from __future__ import annotations

from dataclasses import dataclass

from dpdash import _validation as check
from dpdash.errors import ParameterError

__all__ = ["Budget"]


@dataclass(frozen=True, slots=True)
class Budget:
    """A dataset's total privacy budget: (ε, δ)-DP for everything ever released from it.

    Args:
        epsilon: ε > 0.
        delta: δ in [0, 1); 0 for a pure-DP budget.
    """

    epsilon: float
    delta: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check.positive_finite(self.epsilon, "epsilon"))
        delta = check.non_negative_finite(self.delta, "delta")
        if delta >= 1.0:
            raise ParameterError(f"delta must be a number in [0, 1), got delta={self.delta!r}")
        object.__setattr__(self, "delta", delta)
