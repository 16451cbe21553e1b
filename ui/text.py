"""User text made safe for every place Streamlit renders Markdown: st.markdown, st.caption, alerts,
st.metric, widget labels and help texts. The escaping is the core's ``dpdash.markdown.md`` (the exported
notebook uses it too); see that module for what it does and why.
"""

from __future__ import annotations

import streamlit as st

from dpdash.markdown import md
from dpdash.wording import Guarantee

__all__ = ["md", "show_guarantee"]


def show_guarantee(guarantee: Guarantee, *, lead: str = "", key: str, caption: bool = True) -> None:
    """The guarantee's plain sentence (after ``lead``, Markdown) and, one click away, its technical form.

    Args:
        guarantee: from ``dpdash.wording.guarantee``.
        lead: Markdown put before the sentence (already escaped by the caller).
        key: a key unique on the page, for the expander.
        caption: a caption (the default) or ordinary text.
    """
    (st.caption if caption else st.markdown)(f"{lead}{md(guarantee.plain)}")
    with st.expander("The exact guarantee (technical)", key=key):
        st.markdown(md(guarantee.technical))
