"""AppTest: a table whose file name, column names and categories are Markdown and HTML shows them as text
on every page (each one escaped by ``ui.text.md``), including in errors that quote user input."""

from __future__ import annotations

import dataclasses
import io
import re
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from streamlit.proto.Block_pb2 import Block
from streamlit.testing.v1 import AppTest

from dpdash.datasets import PublicFacts
from dpdash.facts import Facts
from ui.preload import preload_html
from ui.text import md

APP = Path(__file__).resolve().parents[2] / "app.py"
BEACON = "http://127.0.0.1:9"  # nothing listens there; the browser test counts requests for real
# A file's name cannot hold "/" (the loader keeps only the base name), but Markdown decodes the entity
# "&#47;" in a link target, so this name is still an image fetching from BEACON.
FILE = f"![f]({BEACON.replace('/', '&#47;')}&#47;file.png).csv"
NUMERIC = f"![x]({BEACON}/beacon.png)"
CATEGORICAL = f"<img src={BEACON}/b2.png>"
PERSON = f"[id]({BEACON}/id) **bold** $x$"
CATEGORIES = (":red[boom]", f"![c]({BEACON}/c.png)", ":material/warning: $x^2$")
TYPED_EPSILON = f"![e]({BEACON}/e.png)"
# What a rendered Markdown string must not contain outside backslash escapes.
ACTIVE = ("![", "<img", "](http", ":red[", "$x")
_ESCAPED = re.compile(r"\\[!-/:-@\[-`{-~]")
_PLAIN_TEXT = {"text", "code", "dataframe", "arrow_data_frame", "plotly_chart", "json", "html"}


def hostile_csv() -> bytes:
    data = pd.DataFrame({
        NUMERIC: [10, 20, 30, 40, 50, 60],
        CATEGORICAL: [CATEGORIES[0], CATEGORIES[1], CATEGORIES[2], CATEGORIES[0], CATEGORIES[1], "other"],
        PERSON: [1, 1, 2, 3, 4, 5],
    })  # fmt: skip
    buffer = io.StringIO()
    data.to_csv(buffer, index=False)
    return buffer.getvalue().encode()


def _walk(node) -> Iterator:  # type: ignore[no-untyped-def]
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _walk(child)


def rendered_markdown(app: AppTest) -> list[str]:
    """Every string Streamlit renders as Markdown: bodies, labels and help texts of all elements."""
    texts = []
    for root in (app.main, app.sidebar):
        for node in _walk(root):
            if getattr(node, "type", None) in ("expander", "status"):  # an expander's or status's label
                texts.append(node.label)
            proto = getattr(node, "proto", None)
            if proto is None or getattr(node, "type", None) in _PLAIN_TEXT:
                continue
            for field in ("body", "label", "help"):
                if field in proto.DESCRIPTOR.fields_by_name and getattr(proto, field):
                    texts.append(getattr(proto, field))
    return texts


def active_markup(text: str) -> list[str]:
    """The Markdown/HTML openings in ``text`` that are not backslash-escaped."""
    bare = _ESCAPED.sub("", text)
    return [token for token in ACTIVE if token in bare]


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("DPDASH_LEDGER", str(tmp_path / "ledger.sqlite"))
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.run()
    return at


def test_active_markup_sees_what_is_not_escaped() -> None:
    assert active_markup(f"Data: {NUMERIC}") == ["![", "](http"]
    assert active_markup(f"Data: {md(NUMERIC)} {md(CATEGORICAL)} {md(PERSON)}") == []
    assert active_markup("\\\\" + CATEGORICAL) == ["<img"]  # an escaped backslash does not escape "<"


def test_hostile_names_render_as_text_on_every_page(app: AppTest) -> None:
    seen: list[str] = []

    def visit(where: str) -> None:
        assert not app.exception, (where, [e.value for e in app.exception])
        texts = rendered_markdown(app)
        leaks = [(where, text) for text in texts if active_markup(text)]
        # HTML elements (the charts' tables of numbers) are not Markdown: there a name must not open a tag.
        # The one script is the app's own (ui/preload.py: no name or value enters it).
        html = [h.value for h in app.get("html") if h.value != preload_html()]
        leaks += [(where, value) for value in html if "<img" in value or "<script" in value]
        assert leaks == []
        seen.extend(texts)

    app.switch_page("pages/data.py").run()
    # An empty file is refused, and the error quotes the file name.
    app.file_uploader(key="data_upload").set_value((FILE, b"", "text/csv")).run()
    refused = [s for s in app.status if md(FILE) in s.label]  # the step that failed, quoting the name
    assert refused and all(s.proto.state == Block.Expandable.State.ERROR for s in refused)
    visit("data, refused upload")
    app.file_uploader(key="data_upload").set_value((FILE, hostile_csv(), "text/csv")).run()
    assert not app.error, [e.value for e in app.error]
    visit("data, loaded")
    table = app.session_state["dpdash_dataset"]
    assert table.name == FILE and list(table.data.columns) == [NUMERIC, CATEGORICAL, PERSON]
    facts = PublicFacts(bounds={NUMERIC: (0, 100)}, categories={CATEGORICAL: CATEGORIES},
                        unit=Facts(id_column=PERSON, rows_per_person=2))  # fmt: skip
    app.session_state["dpdash_dataset"] = dataclasses.replace(table, facts=facts)  # as "Save the facts" does
    app.run()
    visit("data, facts")
    app.button(key="data_set_budget").click().run()
    app.button(key="data_set_budget_confirm").click().run()
    visit("data, budget")

    app.switch_page("pages/release.py").run()
    app.text_input(key="release_epsilon_typed").input(TYPED_EPSILON).run()
    assert any(md(TYPED_EPSILON) in e.value for e in app.error)  # the message quotes the typed text
    visit("release, bad ε")
    app.text_input(key="release_epsilon_typed").input("1").run()
    app.selectbox(key="release_kind").set_value("Median / quantile").run()
    visit("release, median preview")
    app.selectbox(key="release_kind").set_value("Histogram").run()
    visit("release, histogram preview")
    app.selectbox(key="release_kind").set_value("Count where column = value").run()
    app.selectbox(key="release_where_value").set_value(CATEGORIES[0]).run()
    app.selectbox(key="release_mechanism").set_value("Geometric").run()
    visit("release, count where")
    app.button(key="release_button").click().run()
    visit("release, confirm")
    app.button(key="release_confirm").click().run()
    assert any(f"Released · count of rows where {md(CATEGORICAL)}" in m.value for m in app.markdown)
    visit("release, released")

    app.switch_page("pages/budget.py").run()
    visit("budget")
    app.file_uploader(key="budget_import").set_value((FILE + ".json", NUMERIC.encode(), "application/json"))
    app.run()
    assert app.error  # not a ledger export
    visit("budget, refused import")
    for page in ("home", "explorer", "planner", "risk"):
        app.switch_page(f"pages/{page}.py").run()
        visit(page)
    app.switch_page("pages/audit.py").run()
    app.radio(key="audit_what").set_value("A query on the loaded table").run()
    app.selectbox(key="audit_query").set_value("Sum of a column").run()
    visit("audit, sum")

    shown = " ".join(seen)
    for name in (FILE, NUMERIC, CATEGORICAL, PERSON, CATEGORIES[0]):  # the names were shown, as text
        assert md(name) in shown, name
