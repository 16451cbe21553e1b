"""Run an audit: draw trials on both sides, choose the event on one half, bound ε on the other.

``audit(target, trials=…)`` gives an :class:`AuditResult`; :class:`AuditRun` does the same in steps, so
that a screen can show the evidence as it accumulates. Each batch of trials is split in two fixed
halves: the *search* half chooses the event (``dpdash.audit.events``), the *evaluation* half, which the
choice never saw, counts it. The result is a one-sided bound: with probability ≥ ``confidence`` (over
the evaluation trials), the mechanism is not (ε, δ)-DP for any ε below ``epsilon_lower``.

Read it as evidence, not proof. A lower bound at or below the claimed ε is *consistent* with the claim
(it cannot prove it: the audit only tries one pair of inputs and one family of events); a lower bound
above the claimed ε *refutes* the claim, at the stated confidence. One more caution: stopping a run
when the bound looks largest inflates it; decide the number of trials before you look.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from dpdash import _validation as check
from dpdash.audit.bounds import epsilon_bounds
from dpdash.audit.events import Event, best_event
from dpdash.audit.targets import AuditTarget

__all__ = ["DEFAULT_BATCH", "AuditResult", "AuditRun", "audit"]

#: The search half scores candidate events at confidence 1 − (1 − c)/SEARCH_STRICTNESS: a stricter
#: score prefers events with more mass over tail events whose ratio looked high by chance (the winner's
#: curse), which raises the evaluation half's bound (measured: the 5th percentile of 30 geometric
#: audits rose from 0.87ε to 0.97ε). It changes only which event is chosen, never the reported bound.
SEARCH_STRICTNESS = 1000

#: Trials per side drawn at a time (memory ~ 8 bytes × 2 × batch, and a progress step).
DEFAULT_BATCH = 100_000

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class AuditResult:
    """What an audit found.

    Attributes:
        target: what was audited (label, claimed ε and δ, the pair, the statistic).
        trials: trials per side (search + evaluation).
        confidence: the confidence of ``epsilon_lower``.
        event: the distinguishing event (chosen on the search half).
        hits_first, hits_second: how many evaluation trials of each side fell in the event, out of
            ``evaluation_first`` and ``evaluation_second``.
        epsilon_lower: with probability ≥ confidence, the mechanism is not (ε, δ)-DP for ε below this
            (δ the claimed δ); 0 when the trials show nothing.
        epsilon_estimate: the plug-in ln((p̂ − δ)/q̂) of the event (may be ±∞).
        epsilon_upper: the matching upper confidence bound for this event's ratio (not for the mechanism).
        first, second: every trial's statistic on each side, for histograms.
    """

    target: AuditTarget
    trials: int
    confidence: float
    event: Event
    hits_first: int
    hits_second: int
    evaluation_first: int
    evaluation_second: int
    epsilon_lower: float
    epsilon_estimate: float
    epsilon_upper: float
    first: np.ndarray = field(repr=False)
    second: np.ndarray = field(repr=False)

    @property
    def claimed_epsilon(self) -> float:
        return self.target.epsilon

    @property
    def refutes_claim(self) -> bool:
        """True when the lower bound exceeds the claimed ε: the claim is false at the stated confidence."""
        return self.epsilon_lower > self.target.epsilon

    @property
    def power(self) -> float:
        """epsilon_lower / claimed ε: how much of the claim the experiment could confirm."""
        return self.epsilon_lower / self.target.epsilon

    @property
    def verdict(self) -> str:
        """One sentence for a screen or a report."""
        c = f"{100 * self.confidence:.4g}%"
        claim = f"ε = {self.target.epsilon:.4g}" + (
            f", δ = {self.target.delta:.3g}" if self.target.delta else ""
        )
        if self.refutes_claim:
            return (
                f"VIOLATION: with {c} confidence, ε ≥ {self.epsilon_lower:.4g} > the claimed {claim}. "
                "This mechanism does not keep its promise."
            )
        return (
            f"Consistent with the claim: with {c} confidence, ε ≥ {self.epsilon_lower:.4g}, at most the "
            f"claimed {claim} ({self.power:.0%} of it shown by experiment)."
        )

    def summary(self) -> dict[str, object]:
        """The figures as plain data."""
        return {
            "label": self.target.label,
            "claimed_epsilon": self.target.epsilon,
            "claimed_delta": self.target.delta,
            "trials_per_side": self.trials,
            "confidence": self.confidence,
            "event": self.event.describe(),
            "event_favours": "first" if self.event.forward else "second",
            "epsilon_lower": self.epsilon_lower,
            "epsilon_estimate": self.epsilon_estimate,
            "epsilon_upper": self.epsilon_upper,
            "refutes_claim": self.refutes_claim,
        }


class AuditRun:
    """An audit in steps: ``add(n)`` draws n more trials per side, ``result()`` bounds ε from all so far."""

    def __init__(self, target: AuditTarget, *, confidence: float = 0.99) -> None:
        if not isinstance(target, AuditTarget):
            raise TypeError(f"target must be an AuditTarget, got {type(target).__name__}")
        self.target = target
        self.confidence = check.open_unit(confidence, "confidence")
        self._search: tuple[list[np.ndarray], list[np.ndarray]] = ([], [])
        self._evaluation: tuple[list[np.ndarray], list[np.ndarray]] = ([], [])
        self.trials = 0

    def add(self, n: int, *, batch: int = DEFAULT_BATCH, progress: Progress | None = None) -> None:
        """Draw n more release-grade trials on each side (in batches; ``progress(done, n)`` after each)."""
        n = check.non_negative_int(n, "n")
        batch = check.positive_int(batch, "batch")
        done = 0
        while done < n:
            size = min(batch, n - done)
            for side, draw in enumerate((self.target.draw_first, self.target.draw_second)):
                samples = np.asarray(draw(size), dtype=float)
                half = size // 2
                self._search[side].append(samples[:half])
                self._evaluation[side].append(samples[half:])
            done += size
            self.trials += size
            if progress is not None:
                progress(done, n)

    def _samples(self, halves: tuple[list[np.ndarray], list[np.ndarray]], side: int) -> np.ndarray:
        parts = halves[side]
        return np.concatenate(parts) if parts else np.empty(0)

    def result(self) -> AuditResult:
        """The bound from every trial drawn so far (at least 2 per side are needed)."""
        if self.trials < 2:
            raise ValueError("draw at least 2 trials per side (add(n)) before asking for a result")
        search = [self._samples(self._search, s) for s in (0, 1)]
        evaluation = [self._samples(self._evaluation, s) for s in (0, 1)]
        strict = 1.0 - (1.0 - self.confidence) / SEARCH_STRICTNESS
        event = best_event(
            search[0], search[1], delta=self.target.delta, confidence=strict, family=self.target.events
        )
        hits = [event.hits(evaluation[0]), event.hits(evaluation[1])]
        sizes = [evaluation[0].size, evaluation[1].size]
        num, den = (0, 1) if event.forward else (1, 0)
        lower, estimate, upper = epsilon_bounds(
            hits[num], sizes[num], hits[den], sizes[den], delta=self.target.delta, confidence=self.confidence
        )
        return AuditResult(
            target=self.target,
            trials=self.trials,
            confidence=self.confidence,
            event=event,
            hits_first=hits[0],
            hits_second=hits[1],
            evaluation_first=sizes[0],
            evaluation_second=sizes[1],
            epsilon_lower=max(lower, 0.0),
            epsilon_estimate=estimate,
            epsilon_upper=upper,
            first=np.concatenate([search[0], evaluation[0]]),
            second=np.concatenate([search[1], evaluation[1]]),
        )


def audit(
    target: AuditTarget,
    *,
    trials: int = 200_000,
    confidence: float = 0.99,
    batch: int = DEFAULT_BATCH,
    progress: Progress | None = None,
) -> AuditResult:
    """Audit ``target`` with ``trials`` release-grade trials per side (half to choose the event, half to
    count it) and return the lower bound on ε at ``confidence`` (see the module docstring).

    >>> from dpdash.mechanisms import Laplace
    >>> from dpdash.audit import mechanism_target
    >>> result = audit(mechanism_target(Laplace(epsilon=1.0, sensitivity=1.0), 0.0, 1.0), trials=100_000)
    >>> 0.8 < result.epsilon_lower <= 1.0
    True
    """
    run = AuditRun(target, confidence=confidence)
    run.add(check.positive_int(trials, "trials"), batch=batch, progress=progress)
    return run.result()
