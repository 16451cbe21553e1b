"""The Mechanism explorer's tables, cached for the whole server (they depend only on the numbers given).

Exact calibrations (the discrete Gaussian's σ to the last bit, the smallest ε for an accuracy) take about
0.5 s for the explorer's first screen; :func:`warm` computes that screen once in the background
(``ui.warm``) so that the first visitor does not wait for it.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from dpdash import comparison
from dpdash.datasets import load_example
from dpdash.facts import Facts
from ui.widgets import DEFAULT_DELTA, DEFAULT_EPSILON, EPSILON_STOPS

#: The explorer's first screen: one answer, 95 % confidence, ±5 accepted; its sensitivity is the active
#: table's for a count (:func:`count_sensitivity`).
DEFAULTS = {"k": 1, "confidence": 0.95}
DEFAULT_ALPHA = 5.0


def count_sensitivity(unit: Facts) -> float:
    """Δ₁ = Δ₂ of a count under the unit of privacy ``unit``: c, the rows one person may have (each row
    adds at most 1; under substitution a filtered count's c rows may all start or stop matching)."""
    return float(unit.rows_per_person)


def protected_by(unit: Facts, l1: float, l2: float) -> tuple[Facts | None, str]:
    """Whom a count with sensitivities (Δ₁, Δ₂) protects, as facts for ``dpdash.wording.guarantee``,
    and a lead that says how that follows from the Δ entered and the active table's ``unit``: m =
    ⌊min(Δ₁, Δ₂)⌋ rows of one person (each row moves a count by 1). None when Δ < 1 covers no row."""
    c, rows = unit.rows_per_person, math.floor(min(l1, l2) + 1e-9)
    shown = f"Δ = {l1:g}" if l1 == l2 else f"Δ₁ = {l1:g}, Δ₂ = {l2:g}"
    if rows == c:
        per = "one row" if c == 1 else f"up to {c} rows"
        return unit.unit_only, (
            f"{shown}: a count of the active table, whose unit of privacy is a person with {per} (each row "
            f"moves a count by 1). "
        )
    table = f"the active table declares up to {c} rows per person, so its counts need Δ = {c}"
    if rows < 1:
        return None, (
            f"{shown}, as entered: less than one row moves a count, so for a count this protects no row "
            f"({table}). It fits a query that one person moves by at most {min(l1, l2):g}."
        )
    covered = "one row" if rows == 1 else f"up to {rows} rows of one person"
    return Facts(neighbours=unit.neighbours, rows_per_person=rows), (
        f"{shown}, as entered: for a count (each row moves it by 1) this covers {covered}; {table}. "
    )


@st.cache_data(show_spinner=False, max_entries=256)
def compared(epsilon: float, delta: float, l1: float, l2: float, k: int, confidence: float) -> pd.DataFrame:
    """``comparison.compare`` at one ε."""
    return comparison.compare(
        epsilon=epsilon, delta=delta, l1_sensitivity=l1, l2_sensitivity=l2, k=k, confidence=confidence
    )


@st.cache_data(show_spinner="Computing the accuracy of every mechanism across ε…", max_entries=64)
def curves(delta: float, l1: float, l2: float, k: int, confidence: float) -> pd.DataFrame:
    """``comparison.accuracy_curves`` at 31 ε from the slider's first stop to its last (log spaced)."""
    epsilons = np.geomspace(EPSILON_STOPS[0], EPSILON_STOPS[-1], 31)
    return comparison.accuracy_curves(
        epsilons=epsilons, delta=delta, l1_sensitivity=l1, l2_sensitivity=l2, k=k, confidence=confidence
    )


@st.cache_data(show_spinner="Solving for ε…", max_entries=64)
def inverted(alpha: float, delta: float, l1: float, l2: float, k: int, confidence: float) -> pd.DataFrame:
    """``comparison.epsilon_for_accuracy``: the smallest ε for ±``alpha``."""
    return comparison.epsilon_for_accuracy(
        alpha=alpha, delta=delta, l1_sensitivity=l1, l2_sensitivity=l2, k=k, confidence=confidence
    )


def warm(example: str = "patients") -> None:
    """Compute the explorer's first screen into the server's cache: its sensitivity is that of a count of
    ``example``, the table a first visit opens on (``ui.state.DEFAULT_EXAMPLE``)."""
    delta = count_sensitivity(load_example(example).facts.unit)
    numbers = (delta, delta, *DEFAULTS.values())
    compared(DEFAULT_EPSILON, DEFAULT_DELTA, *numbers)
    curves(DEFAULT_DELTA, *numbers)
    inverted(DEFAULT_ALPHA, DEFAULT_DELTA, *numbers)
