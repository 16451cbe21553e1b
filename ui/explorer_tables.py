"""The Mechanism explorer's tables, cached for the whole server (they depend only on the numbers given).

Exact calibrations (the discrete Gaussian's σ to the last bit, the smallest ε for an accuracy) take about
0.5 s for the explorer's first screen; :func:`warm` computes that screen once in the background
(``ui.warm``) so that the first visitor does not wait for it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dpdash import comparison
from ui.widgets import DEFAULT_DELTA, DEFAULT_EPSILON, EPSILON_STOPS

#: The explorer's first screen: ℓ1 and ℓ2 sensitivity 1, one answer, 95 % confidence, ±5 accepted.
DEFAULTS = {"l1": 1.0, "l2": 1.0, "k": 1, "confidence": 0.95}
DEFAULT_ALPHA = 5.0


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


def warm() -> None:
    """Compute the explorer's first screen into the server's cache."""
    numbers = tuple(DEFAULTS.values())
    compared(DEFAULT_EPSILON, DEFAULT_DELTA, *numbers)
    curves(DEFAULT_DELTA, *numbers)
    inverted(DEFAULT_ALPHA, DEFAULT_DELTA, *numbers)
