"""ui.text.md: user text becomes Markdown that CommonMark and Streamlit's extensions render as that text."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ui.text import md

CORPUS = [
    "![x](http://127.0.0.1:9/beacon.png)",
    "![x][ref]\n\n[ref]: http://127.0.0.1:9/r.png",
    "[click](http://evil.example/)",
    "<http://evil.example/>",
    "http://evil.example/a.png www.evil.example a@evil.example",
    "<img src=http://127.0.0.1:9/b2.png>",
    '<img src="x" onerror="alert(1)">',
    "<script>alert(1)</script>",
    "&lt;img src=x&gt; &#60;b&#62;",
    ":red[boom] :blue-background[x] :rainbow[y]",
    ":material/warning: :streamlit: :smile: :+1:",
    "$x^2$ $$\\int$$ \\$ $5 and $6",
    "back\\slash \\\\ \\*not\\*",
    "snake_case __dunder__ *a* **b** ~~c~~",
    "`code` ``x`` ```fence```",
    "# heading",
    "- item\n+ item\n* item\n1. item\n2) item",
    "> quote\n>> nested",
    "| a | b |\n|---|---|",
    "text  \nhard break\r\nand\u2028line\u2029sep\x85nel\x0bvt\x0cff",
    "[^1] footnote\n\n[^1]: http://evil.example/",
    "{curly} (round) [square]",
]
# Streamlit's frontend (StreamlitMarkdown): it loads remark-emoji only when the source matches this, turns
# ":material/" into an icon, and detects LaTeX after dropping escaped \\ \$ \` and code spans.
_STREAMLIT_EMOJI = re.compile(r":(?!material/|streamlit:)[\w+-][\w_+-]*:", re.ASCII)
_STREAMLIT_NOT_MATH = re.compile(
    r"(?m:^) {0,3}(`{3,}|~{3,})[\s\S]*?(?:\n[ \t]*\1|$)|(?<!`)(`+)[^`\n]+\2(?!`)|\\[\\$`]"
)
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_LINE_BREAKS = re.compile(r"[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]+")
_ASCII_PUNCTUATION = re.compile(r"[!-/:-@\[-`{-~]")
# remark-gfm (mdast-util-gfm-autolink-literal) links these in text nodes, after escapes are undone.
_GFM_URL = re.compile(r"(https?://|www(?=\.))([-.\w]+)([^ \t\r\n]*)", re.IGNORECASE | re.ASCII)
_GFM_EMAIL = re.compile(r"([-.\w+]+)@([-\w]+(?:\.[-\w]+)+)", re.ASCII)
_JOINER = "\u2060"


def _commonmark_text(markdown: str) -> str:
    """What CommonMark shows for Markdown made only of text and backslash escapes."""
    return _ESCAPE.sub(r"\1", markdown)


def _assert_plain(text: str) -> None:
    out = md(text)
    shown = _commonmark_text(out)
    # Shown as itself, on one line (with invisible word joiners where a bare URL would start).
    assert shown.replace(_JOINER, "") == _LINE_BREAKS.sub(" ", text).replace(_JOINER, "")
    assert not _GFM_URL.search(shown) and not _GFM_EMAIL.search(shown)
    bare = _ESCAPE.sub("", out)
    assert not _ASCII_PUNCTUATION.search(bare)  # no unescaped character can open any Markdown or HTML
    assert not _LINE_BREAKS.search(out)  # no new block: heading, list, quote, table, definition
    assert ":material/" not in out and not _STREAMLIT_EMOJI.search(out)
    assert "$" not in _STREAMLIT_NOT_MATH.sub("_", out)  # no LaTeX


@pytest.mark.parametrize("text", CORPUS)
def test_hostile_corpus_renders_as_text(text: str) -> None:
    _assert_plain(text)


def test_examples() -> None:
    assert md("![x](http://h/b.png)") == "\\!\\[x\\]\\(http\\:\u2060\\/\\/h\\/b\\.png\\)"
    assert md("www.x.org a@b.org") == "www\u2060\\.x\\.org a\\@\u2060b\\.org"
    assert md("<img src=x>") == r"\<img src\=x\>"
    assert md(":red[x] $y$") == r"\:red\[x\] \$y\$"
    assert md("a\\b_c*d`e") == r"a\\b\_c\*d\`e"
    assert md("line\n\n# two") == r"line \# two"
    assert md("plain ε words 123") == "plain ε words 123"
    assert md(ValueError("got 'x_y'")) == r"got \'x\_y\'"


@given(st.text())
def test_any_text_renders_as_itself(text: str) -> None:
    _assert_plain(text)
