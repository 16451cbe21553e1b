"""The owner's preview of a synthetic table on the Synthetic table page: simulated, seeded, spends
nothing, NOT PRIVATE (its figures and real rows read the true table)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dpdash.synthetic import Quality, SyntheticRelease
from ui.chart_view import show_chart
from ui.numbers import significant
from ui.synthetic_charts import association_heatmap, tvd_figure, tvd_table

__all__ = ["SIDE_BY_SIDE_ROWS", "show_preview"]

#: Rows shown side by side, synthetic and real.
SIDE_BY_SIDE_ROWS = 8


def show_preview(preview: SyntheticRelease, figures: Quality, real: pd.DataFrame) -> None:
    """The preview's quality against the true table: TVD table and bars, the association difference as a
    heatmap, a few rows side by side (the real ones labelled NOT PRIVATE), and what a release will be."""
    st.caption(
        "A seeded draw at the chosen budget from the true table, with numpy's fast sampler: recorded "
        "nowhere, published nowhere. **A release draws every measurement and every row again**, so its "
        "quality will resemble this preview's, not equal it. The figures below read the true table: they "
        "are for you, the data owner, only."
    )
    one, two = st.columns(2)
    one.metric("Mean one-way TVD (preview)", significant(figures.mean_one_way, 3),
               help="Total-variation distance ½ Σ |p − q| of each column's cell shares, synthetic vs true, "
               "averaged over the columns (0: identical, 1: disjoint).")  # fmt: skip
    two.metric("Mean two-way TVD (preview)",
               significant(figures.mean_two_way, 3) if figures.two_way else "none measured",
               help="The same over the pairs of columns MST measured.")  # fmt: skip
    st.dataframe(tvd_table(figures).style.format({"TVD": "{:.4f}"}), hide_index=True,
                 key="synthetic_tvd_table")  # fmt: skip
    show_chart(tvd_figure(figures), key="synthetic_tvd_chart")
    if len(figures.association_true) > 1:
        show_chart(association_heatmap(figures), key="synthetic_association_chart")
        st.caption(
            "Association per pair of columns: the Pearson correlation of bin midpoints for two numeric "
            "columns, Cramér's V over the declared cells when one is categorical (the \"(other)\" cells "
            "left out). Red: stronger in the synthetic table than in the true one; blue: weaker."
        )
    left, right = st.columns(2)
    with left:
        st.markdown("**Synthetic rows (preview: not a release)**")
        st.dataframe(preview.table.head(SIDE_BY_SIDE_ROWS), hide_index=True, key="synthetic_preview_rows")
    with right:
        st.markdown("**Real rows: NOT PRIVATE (data owner only)**")
        st.dataframe(real, hide_index=True, key="synthetic_real_rows")
