"""Streamlit-only helpers for dpdash pages: session state, widgets, Plotly figures.

The core library in ``dpdash/`` never imports Streamlit; anything that does lives here.
"""
