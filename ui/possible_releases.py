"""One possible (simulated) release at a time, with controls a keyboard reaches: a slider picks the
possible release to show, and a "Play" toggle steps through them once a second (Plotly's own Play/Stop
buttons are SVG, which no keyboard can focus). Spends no budget.

The view is a fragment: moving the slider or playing redraws this chart only, not the page above it.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from ui.chart_view import show_chart
from ui.preview_charts import possible_release_figure, release_axis

__all__ = ["PLAY_SECONDS", "possible_releases", "typical_first"]

#: While playing, the next possible release appears after this many seconds.
PLAY_SECONDS = 1.0


def typical_first(draws: np.ndarray, true_values: np.ndarray | None = None) -> np.ndarray:
    """``draws`` (one possible release per row) with a typical one moved to the front, the others in
    their order: the one whose distance from the centre (the true values, or without them each
    answer's median draw), the largest over its answers, is closest to the median distance. A first
    view then shows what a release usually looks like, not whichever extreme came first."""
    draws = np.asarray(draws, dtype=float)
    if draws.shape[0] <= 1:
        return draws
    centre = np.median(draws, axis=0) if true_values is None else np.asarray(true_values, dtype=float)
    distance = np.abs(draws - centre).reshape(draws.shape[0], -1).max(axis=1)
    typical = int(np.argmin(np.abs(distance - np.median(distance))))
    order = np.r_[typical, np.delete(np.arange(draws.shape[0]), typical)]
    return draws[order]


def possible_releases(
    draws: np.ndarray, true_values: np.ndarray | None, labels: list[str], *, key: str
) -> None:
    """Possible releases ``draws`` (one per row) of the answers ``labels``, one at a time, on one axis
    (so they compare), with the true values marked (owner only)."""
    frame_key, play_key = f"{key}_possible_release", f"{key}_possible_play"
    draws = typical_first(draws, true_values)
    count = int(draws.shape[0])
    y_range, zoomed = release_axis(draws, true_values)
    playing = bool(st.session_state.get(play_key, False))

    @st.fragment(run_every=PLAY_SECONDS if playing else None)
    def view() -> None:
        now_playing = st.toggle(
            "Play: a new possible release every second", key=play_key,
            help="Steps through the possible releases; switch off to stop. Space toggles it.",
        )  # fmt: skip
        if now_playing != playing:  # start or stop the timer: it is set when the page runs
            st.rerun(scope="app")
        if now_playing:  # the timer's tick: show the next one
            st.session_state[frame_key] = st.session_state.get(frame_key, 1) % count + 1
        elif not 1 <= st.session_state.get(frame_key, 1) <= count:
            st.session_state[frame_key] = 1
        shown = st.slider(
            "Possible release shown", min_value=1, max_value=count, key=frame_key,
            help=f"{count} possible releases, each as likely as the others; the first is a typical one (at "
            "the median distance from the middle). Arrow keys step through them.",
        )  # fmt: skip
        title = f"Possible release {shown} of {count} (simulated: spends no budget)"
        show_chart(
            possible_release_figure(draws[shown - 1], true_values, labels, y_range=y_range, zoomed=zoomed,
                                    title=title),
            key=f"{key}_possible_chart",
        )  # fmt: skip

    view()
