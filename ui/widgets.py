"""Streamlit widgets shared by several pages."""

from __future__ import annotations

import math

import streamlit as st

from dpdash import _validation as check
from dpdash.errors import DPDashError
from ui.numbers import delta_text
from ui.state import ActiveTable, budget_status
from ui.text import md

#: The ε control's stops: a 1-2-3-5-7 log scale from 0.01 to 10.
EPSILON_STOPS = (0.01, 0.015, 0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.3, 0.5, 0.7,
                 1.0, 1.5, 2.0, 3.0, 5.0, 7.0, 10.0)  # fmt: skip
DELTA_STOPS = (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10)
EPSILON_WARNING = 5.0
#: What the ε and δ controls show until a person moves them.
DEFAULT_EPSILON = 1.0
DEFAULT_DELTA = 1e-5


def epsilon_control(
    key: str, default: float = DEFAULT_EPSILON, *, label: str = "ε for this release"
) -> float | None:
    """A log-scale ε slider (0.01–10, ends labelled) and a box to type an exact ε, with one value.

    The slider's state (``{key}_slider``) is the page's one ε: a valid typed value moves the slider to it
    (added as a stop when it is not one), and moving the slider clears the typed text, so the two
    controls never disagree. A typed value must lie in dpdash's supported range (``EPSILON_MIN`` to
    ``EPSILON_MAX``). ``label`` names what the ε is for on this page ("ε for this release", "Claimed ε
    to audit").

    Returns the ε to use, or ``None`` after showing an error when the typed value is not valid (the
    widgets keep their values; nothing is computed with an ε the person did not choose). Shows a
    warning at ε ≥ 5.
    """
    slider_key, typed_key = f"{key}_slider", f"{key}_typed"
    if slider_key not in st.session_state:  # first visit, or back from another page
        st.session_state[slider_key] = default

    def _slider_moved() -> None:
        st.session_state[typed_key] = ""

    def _typed() -> None:
        typed = _valid(st.session_state.get(typed_key, ""))
        if typed is not None:
            st.session_state[slider_key] = typed

    shown = st.session_state[slider_key]
    slider = st.select_slider(
        label,
        options=sorted({*EPSILON_STOPS, shown}),
        format_func=lambda e: f"{e:g}",
        key=slider_key,
        on_change=_slider_moved,
        help="Smaller ε: more noise, more privacy. A typed ε shows here too.",
    )
    left, right = st.columns(2)
    left.caption("← more privacy")
    right.markdown(
        "<div style='text-align:right;font-size:0.875rem;opacity:0.7'>more accuracy →</div>",
        unsafe_allow_html=True,
    )
    typed = st.text_input(
        "…or type an exact ε", key=typed_key, placeholder="e.g. 0.8", on_change=_typed,
        help=f"Any ε from {check.EPSILON_MIN:g} to {check.EPSILON_MAX:g}; the slider moves to it. Moving "
        "the slider clears this box.",
    )  # fmt: skip
    epsilon = slider
    if typed.strip():
        try:
            epsilon = check.epsilon(_number(typed))
        except DPDashError as error:
            st.error(
                f"{md(error)}. Type a number from {check.EPSILON_MIN:g} to {check.EPSILON_MAX:g}, such as "
                "0.5 or 1, or clear the box to use the slider.",
                icon=":material/error:",
            )
            return None
        st.caption(f"Using the typed ε = {epsilon:g}; move the slider or clear the box to use the slider.")
    if epsilon >= EPSILON_WARNING:
        st.warning(
            f"ε = {epsilon:g} is a weak guarantee: an attacker's odds about any one person can grow by "
            f"a factor of up to e^ε ≈ {_e_to(epsilon)}. Deployments rarely go above 5 per release.",
            icon=":material/warning:",
        )
    return epsilon


def _valid(text: str) -> float | None:
    """The typed text as a supported ε, or ``None`` (blank or invalid: the page shows why)."""
    if not text.strip():
        return None
    try:
        return check.epsilon(_number(text))
    except DPDashError:
        return None


def delta_control(
    key: str, default: float = DEFAULT_DELTA, label: str = "δ (Gaussian-type mechanisms only)"
) -> float:
    """A δ picker on a log scale (for the Gaussian-type mechanisms and key selection)."""
    return st.select_slider(
        label,
        options=DELTA_STOPS,
        value=default,
        format_func=delta_text,
        key=key,
        help="The probability that the ε guarantee may fail. Keep it well below 1/(number of people).",
    )


def _number(text: str) -> object:
    """The typed text as a float, or the text itself so that validation names it in its message."""
    try:
        return float(text.strip())
    except ValueError:
        return text.strip()


def _e_to(epsilon: float) -> str:
    """e^ε for a supported ε (≤ 100, so no overflow), in digits while they are readable."""
    factor = math.exp(min(epsilon, check.EPSILON_MAX))
    return f"{factor:,.0f}" if factor < 1e9 else f"{factor:.3g}"


def release_epsilon_default(remaining_epsilon: float | None) -> float:
    """The per-release ε a page starts from: a tenth of the remaining budget ε, rounded down to a stop of
    the ε slider (so it reads 0.1, 0.05, 0.03 …), and within the slider's range (0.01 to 10).

    ``None`` (no budget set yet) gives 1, the slider's middle: nothing can be released then anyway.

    >>> release_epsilon_default(1.0), release_epsilon_default(0.25), release_epsilon_default(2e-5)
    (0.1, 0.02, 0.01)
    """
    if remaining_epsilon is None or not math.isfinite(remaining_epsilon):
        return 1.0
    tenth = remaining_epsilon / 10
    fitting = [stop for stop in EPSILON_STOPS if stop <= tenth * (1 + 1e-9)]
    return fitting[-1] if fitting else EPSILON_STOPS[0]


def table_epsilon_default(table: ActiveTable) -> float:
    """``release_epsilon_default`` of what remains of ``table``'s budget (1 while it has none, or while
    the ledger cannot be read: the page says so where it releases)."""
    try:
        status = budget_status(table)
    except DPDashError:
        return release_epsilon_default(None)
    return release_epsilon_default(None if status is None else status.remaining_epsilon)
