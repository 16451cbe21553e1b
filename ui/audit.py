"""The Audit page's helpers: what can be audited, the worst-case input pairs, and the run kept in
``st.session_state`` (so that a rerun still shows the last result and "add more" continues it)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
import streamlit as st

from dpdash.audit import AuditResult, AuditRun, AuditTarget
from dpdash.audit.neighbours import Neighbour, worst_case_neighbour
from dpdash.mechanisms import (
    ExponentialMechanism,
    Laplace,
    PermuteAndFlip,
    RandomizedResponse,
    ReportNoisyMax,
)
from dpdash.queries import Query
from ui.mechanism_menus import NOISE_MECHANISMS, SELECTION_MECHANISMS, needs_delta
from ui.state import ActiveTable, table_rows

_RUN = "audit_run_state"
_NEIGHBOURS = "audit_neighbours"
_NEIGHBOURS_KEPT = 8
#: Selection mechanisms are audited on this many candidates (more candidates, a stronger test).
CANDIDATES = 8
#: Each run draws its trials in this many steps, redrawing the results after each.
STEPS = 10
#: At most this many trials per side in one run (memory: 16 bytes per trial pair, kept twice).
MAX_TRIALS = 5_000_000


@dataclass(frozen=True, slots=True, kw_only=True)
class HalfNoiseLaplace:
    """A deliberately broken mechanism for demonstration: it claims ε but adds the Laplace noise of 2ε
    (half the scale Δ/ε it needs), so it is only 2ε-DP. An audit should refute it."""

    name: ClassVar[str] = "Laplace with half the noise it needs (broken)"
    delta: ClassVar[float] = 0.0

    epsilon: float
    sensitivity: float

    def release_trials(self, values: npt.ArrayLike, n: int) -> np.ndarray:
        return Laplace(epsilon=2 * self.epsilon, sensitivity=self.sensitivity).release_trials(values, n)


@dataclass(frozen=True, slots=True)
class MechanismChoice:
    """One entry of the page's mechanism list: how to build it and which inputs it takes."""

    build: Callable[..., Any]
    kind: str  # "answer" (two true answers), "selection" (two utility vectors), "local" (a value)
    integer: bool = False
    needs_delta: bool = False


def _menu_choice(cls: type, kind: str, integer: bool) -> MechanismChoice:
    """A mechanism of the query menus (``ui.mechanism_menus``), built at (ε, δ, Δ)."""
    if needs_delta(cls):
        return MechanismChoice(lambda e, d, s: cls(epsilon=e, delta=d, sensitivity=s), kind, integer, True)
    return MechanismChoice(lambda e, d, s: cls(epsilon=e, sensitivity=s), kind, integer)


BROKEN = "Laplace with half the noise it needs (broken, for demonstration)"
#: What the page audits: the mechanisms a release offers for a query (answers, then selections; report
#: noisy max takes integer scores), randomized response, and a broken one that an audit should refute.
MECHANISMS: dict[str, MechanismChoice] = {
    **{label: _menu_choice(cls, "answer", cls.integer_valued) for label, cls in NOISE_MECHANISMS.items()},
    **{
        label: _menu_choice(cls, "selection", cls is ReportNoisyMax)
        for label, cls in SELECTION_MECHANISMS.items()
    },
    "Randomized response (k categories)": MechanismChoice(
        lambda e, d, k: RandomizedResponse(epsilon=e, categories=k), "local", integer=True
    ),
    BROKEN: MechanismChoice(lambda e, d, s: HalfNoiseLaplace(epsilon=e, sensitivity=s), "answer"),
}


def mechanism_inputs(mechanism: Any, sensitivity: float) -> tuple[Any, Any, str]:
    """The two neighbouring inputs the page audits ``mechanism`` on, and why they are the worst case.

    Answers: 0 and Δ. Selection: non-monotone utilities move in opposite directions
    ([0, Δ, …, Δ] against [Δ, 0, …, 0]); monotone ones (report noisy max on counts) all the same way
    ([0, Δ, …, Δ] against [0, …, 0]). Randomized response: one respondent's value, 0 against 1.
    """
    if isinstance(mechanism, RandomizedResponse):
        return 0, 1, "one respondent whose true value is 0 in the first input and 1 in the second"
    if isinstance(mechanism, ExponentialMechanism | PermuteAndFlip | ReportNoisyMax):
        d = mechanism.sensitivity
        first = [0] + [d] * (CANDIDATES - 1)
        if mechanism.monotone:
            second = [0] * CANDIDATES
            why = (
                f"utilities of {CANDIDATES} candidates, every other candidate's falling by Δ = {d:g} "
                "(the same direction for all, as the monotone calibration allows): a worst-case pattern"
            )
        else:
            second = [d] + [0] * (CANDIDATES - 1)
            why = (
                f"utilities of {CANDIDATES} candidates, each moving by the full Δ = {d:g}, the first one "
                "up and the others down: a worst-case pattern"
            )
        return first, second, why
    zero = 0 if getattr(mechanism, "integer_valued", False) else 0.0
    return zero, sensitivity, "two neighbouring answers, a full sensitivity apart: the worst case"


@dataclass
class AuditState:
    """One audit kept in the session: its settings, the run, the bound after each step, the result."""

    settings: tuple[Any, ...]
    run: AuditRun
    history: list[tuple[int, float]] = field(default_factory=list)
    result: AuditResult | None = None
    seconds: float = 0.0

    @property
    def trials(self) -> int:
        return self.run.trials

    def draw(self, n: int, on_step: Callable[[AuditState, int, int], None]) -> None:
        """Draw n more trials per side in ``STEPS`` steps; ``on_step(self, done, n)`` after each."""
        n = min(n, MAX_TRIALS - self.run.trials)
        sizes = [n // STEPS + (1 if i < n % STEPS else 0) for i in range(STEPS)]
        done = 0
        for size in sizes:
            if size == 0:
                continue
            started = time.perf_counter()
            self.run.add(size)
            self.result = self.run.result()
            self.seconds += time.perf_counter() - started
            self.history.append((self.run.trials, self.result.epsilon_lower))
            done += size
            on_step(self, done, n)


def current_audit(settings: tuple[Any, ...]) -> AuditState | None:
    """The session's audit if it was run with these settings, else None."""
    state = st.session_state.get(_RUN)
    return state if state is not None and state.settings == settings else None


def has_audit() -> bool:
    """Whether this session has run an audit (with any settings)."""
    return st.session_state.get(_RUN) is not None


def start_audit(settings: tuple[Any, ...], target: AuditTarget, confidence: float) -> AuditState:
    """A fresh audit for these settings, replacing the session's previous one."""
    state = AuditState(settings, AuditRun(target, confidence=confidence))
    st.session_state[_RUN] = state
    return state


def neighbour(table: ActiveTable, query: Query, mechanism: type, epsilon: float, delta: float) -> Neighbour:
    """``worst_case_neighbour`` of the active table, kept in this session (it evaluates the query on many
    candidate tables, so reruns should not redo it)."""
    cache: dict[tuple[Any, ...], Neighbour] = st.session_state.setdefault(_NEIGHBOURS, {})
    key = (table.fingerprint, repr(query.to_dict()), mechanism.__name__, epsilon, delta)
    if key not in cache:
        if len(cache) >= _NEIGHBOURS_KEPT:
            cache.pop(next(iter(cache)))
        rows = table_rows(table)  # the table's rows: the owner's alone (AccessDenied otherwise)
        cache[key] = worst_case_neighbour(query, mechanism, rows, epsilon=epsilon, delta=delta)
    return cache[key]


def shown_input(value: object) -> str:
    """An audit's input as a person writes it: 1 rather than 1.0, lists in brackets."""
    if isinstance(value, list):
        return "[" + ", ".join(shown_input(v) for v in value) + "]"
    return f"{value:g}"
