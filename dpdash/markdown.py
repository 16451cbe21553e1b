"""User text (column, file and dataset names, category values, query names, error messages that quote
them) as Markdown that renders as exactly that text: in Streamlit (``ui.text``) and in a notebook's
Markdown cells (``dpdash.notebook``).

Streamlit renders GitHub-flavoured Markdown, plus its own ``:red[…]`` colours, ``:material/icon:`` icons,
``$…$`` LaTeX and emoji shortcodes; Jupyter renders CommonMark with HTML and ``$…$`` math. A name like
``![x](http://host/beacon.png)`` would make the browser fetch that image. ``md`` puts a backslash before
every ASCII punctuation character, which CommonMark defines as that character shown as itself: images,
links, autolinks, HTML tags, emphasis, code, headings, lists, tables, directives and LaTeX all stay
plain text. Line breaks become spaces, so one name stays inside the sentence it is quoted in. GitHub's
bare-URL links (``http://…``, ``www.…``, ``name@host``) are found in the text after escapes are undone, so
an invisible word joiner (U+2060) goes inside ``://``, ``www.`` and after ``@``.

Use it only where Markdown is rendered: select-box options, data frames, Plotly figures and code show
text as it is, and would show the backslashes.
"""

from __future__ import annotations

import re

__all__ = ["md"]

# Every ASCII punctuation character (CommonMark's escapable set): ! " # $ % & ' ( ) * + , - . / : ; < = > ?
# @ [ \ ] ^ _ ` { | } ~
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
# Everything Markdown or a browser may take as a line end, which could start a new block.
_LINE_BREAKS = re.compile(r"[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]+")
# Where remark-gfm would start a bare-URL or e-mail link: between ":" and "/", "www" and ".", after "@".
_AUTOLINK = re.compile(r"(?<=:)(?=/)|(?<=www)(?=\.)|(?<=@)", re.IGNORECASE)
_WORD_JOINER = "\u2060"


def md(text: object) -> str:
    r"""``str(text)`` as Markdown that renders as exactly that text (line breaks become spaces, and word
    joiners break bare URLs).

    >>> print(md("![x](b.png) :red[$x$] <img>"))
    \!\[x\]\(b\.png\) \:red\[\$x\$\] \<img\>
    """
    text = _AUTOLINK.sub(_WORD_JOINER, _LINE_BREAKS.sub(" ", str(text)))
    return _PUNCTUATION.sub(r"\\\1", text)
