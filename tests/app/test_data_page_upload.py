"""AppTest of the Data page with an uploaded table (issue 13, items 1-4): numeric bounds, unit-of-privacy
widgets that follow the active table and lock with the budget, the budget's confirmation, the budget
following the content (re-uploads, type choices, new versions flagged), and the workspace (a new session
restores the table; "Forget" deletes it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dpdash.facts import Facts, GroupBounds
from dpdash.ledger import Ledger, fingerprint
from dpdash.loading import load_table
from dpdash.workspace import Workspace

APP = Path(__file__).resolve().parents[2] / "app.py"
CSV = b"person_id,age,city\n1,30,Oslo\n1,31,Oslo\n2,40,Bergen\n3,50,Oslo\n3,51,Oslo\n3,52,Oslo\n"
# The same people, columns in another order: the same content.
REORDERED = b"city,age,person_id\nOslo,30,1\nOslo,31,1\nBergen,40,2\nOslo,50,3\nOslo,51,3\nOslo,52,3\n"
# Same columns, one more person: a new version (or another population).
NEWER = CSV + b"4,60,Bergen\n"
IDENTITY = fingerprint(load_table(CSV, "people.csv").data)


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DPDASH_LEDGER", str(tmp_path / "ledger.sqlite"))
    monkeypatch.setenv("DPDASH_WORKSPACE", str(tmp_path / "workspace"))
    return tmp_path


def new_session() -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    at.switch_page("pages/data.py").run()
    assert not at.exception
    return at


def upload(at: AppTest, data: bytes, name: str = "people.csv") -> None:
    at.file_uploader(key="data_upload").set_value((name, data, "text/csv")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]


def widget(elements, label: str):  # type: ignore[no-untyped-def]
    return next(e for e in elements if e.label == label)


def unit_widgets(at: AppTest) -> tuple[str, int, str, bool]:
    """What the three unit-of-privacy controls show, and whether they are locked."""
    id_box = widget(at.selectbox, "Person id column")
    c_box = widget(at.number_input, "Most rows per person (c)")
    relation = widget(at.radio, "Neighbouring tables")
    return id_box.value, int(c_box.value), relation.value, bool(id_box.disabled and c_box.disabled)


def editor(at: AppTest, prefix: str):  # type: ignore[no-untyped-def]
    return next(d for d in at.dataframe if (d.key or "").startswith(prefix))


def save_facts(
    at: AppTest,
    *,
    bounds: dict[str, dict[str, object]] | None = None,
    categories: dict[str, str | dict[str, object]] | None = None,
    id_column: str | None = None,
    c: int | None = None,
) -> None:
    """Edit the grids (rows named by column) and the unit controls as a person would, then save."""
    empty = {"added_rows": [], "deleted_rows": []}
    if bounds is not None:
        grid = editor(at, "data_bounds_editor_")
        rows = {str(i): bounds[column] for i, column in enumerate(grid.value["column"]) if column in bounds}
        at.session_state[grid.key] = {"edited_rows": rows, **empty}
    if categories is not None:
        grid = editor(at, "data_categories_editor_")
        rows = {
            str(i): {"categories": cell} if isinstance(cell := categories[column], str) else cell
            for i, column in enumerate(grid.value["column"])
            if column in categories
        }
        at.session_state[grid.key] = {"edited_rows": rows, **empty}
    if id_column is not None:
        widget(at.selectbox, "Person id column").set_value(id_column)
    if c is not None:
        widget(at.number_input, "Most rows per person (c)").set_value(c)
    widget(at.button, "Save the public facts").click().run()
    assert not at.exception


def set_budget(at: AppTest) -> None:
    at.button(key="data_set_budget").click().run()
    at.button(key="data_set_budget_confirm").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]


def facts(at: AppTest):  # type: ignore[no-untyped-def]
    return at.session_state["dpdash_dataset"].facts


def sidebar_text(at: AppTest) -> str:
    return " ".join(str(getattr(e, "value", "")) for e in at.sidebar).replace("\\", "")  # Markdown escapes


# ---- item 1: bounds ------------------------------------------------------------------------------------
def test_bounds_of_an_upload_are_numbers_and_typed_text_is_read(env: Path) -> None:
    at = new_session()
    upload(at, CSV)
    grid = editor(at, "data_bounds_editor_")
    assert list(grid.value["column"]) == ["person_id", "age"]
    assert str(grid.value["lower"].dtype) == "float64" and str(grid.value["upper"].dtype) == "float64"
    # Text cells (what the old text-typed grid sent) are read as the numbers they are.
    save_facts(
        at,
        bounds={"age": {"lower": "18", "upper": "90"}},
        categories={"city": "Oslo, Bergen"},
        id_column="person_id",
        c=3,
    )
    assert not at.error, [e.value for e in at.error]
    saved = facts(at)
    assert (saved.bounds["age"].lower, saved.bounds["age"].upper) == (18.0, 90.0)
    assert saved.categories["city"] == ("Oslo", "Bergen")
    assert saved.unit == Facts(rows_per_person=3, id_column="person_id")


def test_per_group_bounds_are_declared_with_the_categories_and_used_by_a_histogram(env: Path) -> None:
    """k and m beside a column's categories: saved with the facts, refused half-given or without an id
    column (nothing lost), and a histogram of that column on Query & release says it uses them; with
    the id column a count of people is offered."""
    at = new_session()
    upload(at, CSV)
    save_facts(at, categories={"city": {"categories": "Oslo, Bergen", "k": 1, "m": 2}})
    message = " ".join(e.value for e in at.error).replace("\\", "")
    assert "need the person id column" in message and not facts(at).group_bounds
    save_facts(at, categories={"city": {"categories": "Oslo, Bergen", "k": 1}}, id_column="person_id", c=3)
    message = " ".join(e.value for e in at.error).replace("\\", "")
    assert "city: give both k (most categories per person) and m" in message
    city = {"categories": "Oslo, Bergen", "k": 1, "m": 2}
    save_facts(at, categories={"city": city}, id_column="person_id", c=3)
    assert not at.error, [e.value for e in at.error]
    assert facts(at).group_bounds == {"city": GroupBounds(1, 2)}
    grid = editor(at, "data_categories_editor_")  # shown again as declared
    assert grid.value.set_index("column").loc["city", ["k", "m"]].tolist() == [1.0, 2.0]
    at.switch_page("pages/release.py").run()
    at.selectbox(key="release_kind").set_value("Histogram").run()
    at.selectbox(key="release_column").set_value("city").run()
    assert not at.exception
    assert any("at most 1 of city's categories with at most 2 rows in each" in c.value for c in at.caption)
    at.selectbox(key="release_kind").set_value("Count of people").run()  # distinct ids, sensitivity 1
    assert not at.exception and not any("needs the person id column" in w.value for w in at.warning)
    assert any("Distinct values of person_id" in c.value.replace("\\", "") for c in at.caption)


def test_bad_bounds_are_one_message_per_row_and_nothing_is_lost(env: Path) -> None:
    at = new_session()
    upload(at, CSV)
    save_facts(at, bounds={"age": {"lower": 18, "upper": 90}})
    before = facts(at)
    save_facts(at, bounds={"age": {"lower": 90, "upper": 18}, "person_id": {"upper": 5}})
    message = " ".join(e.value for e in at.error).replace("\\", "")  # Markdown escapes
    assert "The facts were not saved" in message
    assert "age: bounds must have lower < upper" in message
    assert "person_id: give both a lower and an upper bound, or neither" in message
    assert facts(at) == before  # the saved facts are kept
    grid = editor(at, "data_bounds_editor_")
    assert at.session_state[grid.key]["edited_rows"]["1"] == {"lower": 90, "upper": 18}  # entries kept


def test_typed_bounds_are_read_as_numbers_or_named_problems() -> None:
    import pandas as pd

    from ui.facts_editor import read_bounds

    grid = pd.DataFrame({
        "column": ["a", "b", "c", "d", "e", "f"],
        "lower": ["18", "\u22125", "eighteen", None, True, float("nan")],
        "upper": [90.0, "1e3", "3", "4", 2, None],
    })  # fmt: skip
    bounds, problems = read_bounds(grid)
    assert bounds == {"a": (18.0, 90.0), "b": (-5.0, 1000.0)}
    assert problems == [
        "c: the lower bound 'eighteen' is not a number",
        "d: give both a lower and an upper bound, or neither",
        "e: the lower bound True is not a number",
    ]


# ---- item 2: the unit of privacy ---------------------------------------------------------------------
def test_unit_widgets_always_show_the_active_table_and_lock_with_the_budget(env: Path) -> None:
    at = new_session()
    assert unit_widgets(at)[:2] == ("person_id", 5)  # the patients example
    upload(at, CSV)
    assert unit_widgets(at) == ("(none: each row is a person)", 1, "add_remove", False)  # not the example's
    save_facts(at, id_column="person_id", c=3)
    set_budget(at)
    assert unit_widgets(at) == ("person_id", 3, "add_remove", True)
    assert any("The unit of privacy is locked" in c.value for c in at.caption)
    # Save with the (locked) controls untouched: the unit is not weakened.
    save_facts(at, bounds={"age": {"lower": 0, "upper": 120}})
    assert facts(at).unit == Facts(rows_per_person=3, id_column="person_id")
    at.button(key="data_example_tips").click().run()
    assert unit_widgets(at) == ("(none: each row is a person)", 1, "add_remove", False)
    at.button(key="data_example_patients").click().run()
    assert unit_widgets(at)[:2] == ("person_id", 5)
    # Back to the upload through the Datasets page: its own (locked) unit again.
    at.switch_page("pages/datasets.py").run()
    assert not at.exception
    at.selectbox(key="datasets_choice").set_value(
        next(o for o in at.selectbox(key="datasets_choice").options if o.startswith("people.csv"))
    ).run()
    at.button(key="datasets_activate").click().run()
    at.switch_page("pages/data.py").run()
    assert at.session_state["dpdash_dataset"].identity == IDENTITY
    assert unit_widgets(at) == ("person_id", 3, "add_remove", True)
    with Ledger(env / "ledger.sqlite") as ledger:
        assert ledger.unit(IDENTITY).unit == Facts(rows_per_person=3, id_column="person_id")


def test_setting_a_budget_asks_first_and_states_the_unit(env: Path) -> None:
    at = new_session()
    upload(at, CSV)
    save_facts(at, id_column="person_id", c=3)
    at.button(key="data_set_budget").click().run()
    assert any("lock its unit of privacy" in m.value and "person\\_id" in m.value for m in at.markdown)
    with Ledger(env / "ledger.sqlite") as ledger:
        assert ledger.datasets() == []  # nothing yet
    at.button(key="data_set_budget_cancel").click().run()
    assert not [b for b in at.button if b.key == "data_set_budget_confirm"]
    with Ledger(env / "ledger.sqlite") as ledger:
        assert ledger.datasets() == []
    set_budget(at)
    with Ledger(env / "ledger.sqlite") as ledger:
        assert [d.fingerprint for d in ledger.datasets()] == [IDENTITY]


# ---- items 3 and 4: the budget follows the people; the workspace ------------------------------------
def test_the_same_content_keeps_its_budget_and_facts(env: Path) -> None:
    at = new_session()
    upload(at, CSV)
    save_facts(at, bounds={"age": {"lower": 0, "upper": 120}}, id_column="person_id", c=3)
    set_budget(at)
    upload(at, REORDERED, "people-reordered.csv")  # other bytes, the same people
    assert "No budget set" not in sidebar_text(at)
    assert any("This table's total budget" in s.value for s in at.success)
    assert facts(at).unit == Facts(rows_per_person=3, id_column="person_id") and "age" in facts(at).bounds
    # A type choice in the app does not make it another dataset either.
    edited_types = {"edited_rows": {"1": {"type": "text"}}, "added_rows": [], "deleted_rows": []}
    at.session_state[editor(at, "data_types_editor_").key] = edited_types
    at.button(key="data_types_apply").click().run()
    assert at.session_state["dpdash_dataset"].coercions == (("age", "text"),)
    assert any("This table's total budget" in s.value for s in at.success)


def test_a_new_session_restores_the_table_its_facts_and_budget(env: Path) -> None:
    at = new_session()
    upload(at, CSV)
    save_facts(at, bounds={"age": {"lower": 0, "upper": 120}}, id_column="person_id", c=3)
    set_budget(at)
    again = new_session()  # a reload, or a restarted server: same ledger and workspace
    table = again.session_state["dpdash_dataset"]
    assert (table.identity, table.name) == (IDENTITY, "people.csv")
    assert table.facts.unit == Facts(rows_per_person=3, id_column="person_id") and "age" in table.facts.bounds
    assert "people.csv" in sidebar_text(again) and "No budget set" not in sidebar_text(again)
    assert unit_widgets(again) == ("person_id", 3, "add_remove", True)
    again.button(key="data_forget").click().run()  # asks first: nothing is deleted yet
    assert any("cannot be undone" in w.value for w in again.warning)
    assert len(Workspace(env / "workspace").tables()) == 1
    assert again.session_state["dpdash_dataset"].identity == IDENTITY
    again.button(key="data_forget_cancel").click().run()  # "Keep it": the table stays, the question goes
    assert len(Workspace(env / "workspace").tables()) == 1 and not any("cannot be undone" in w.value
                                                                        for w in again.warning)
    again.button(key="data_forget").click().run()
    again.button(key="data_forget_confirm").click().run()
    assert Workspace(env / "workspace").tables() == []
    assert any("was deleted from the workspace" in s.value for s in again.success)
    third = new_session()
    assert third.session_state["dpdash_dataset"].identity != IDENTITY  # the example
    with Ledger(env / "ledger.sqlite") as ledger:
        assert ledger.find_dataset(IDENTITY) is not None  # the budget history stays


def test_a_new_version_is_flagged_and_can_continue_the_budget(env: Path) -> None:
    at = new_session()
    upload(at, CSV)
    save_facts(at, id_column="person_id", c=3)
    set_budget(at)
    upload(at, NEWER, "people-2.csv")
    assert any("looks like the budgeted dataset" in w.value for w in at.warning)
    assert not [b for b in at.button if b.key == "data_set_budget"]  # no fresh budget offered
    at.button(key="data_continue_budget").click().run()
    assert any("a version of" in s.value for s in at.success)
    assert unit_widgets(at) == ("person_id", 3, "add_remove", True)


def test_a_different_population_needs_a_reason_then_gets_its_own_budget(env: Path) -> None:
    at = new_session()
    upload(at, CSV)
    set_budget(at)
    upload(at, NEWER, "people.csv")
    at.button(key="data_distinct").click().run()
    assert any("Say why" in e.value for e in at.error)
    at.text_input(key="data_distinct_reason").set_value("the Bergen clinic's patients").run()
    at.button(key="data_distinct").click().run()
    assert [b for b in at.button if b.key == "data_set_budget"]
    with Ledger(env / "ledger.sqlite") as ledger:
        statement = ledger.distinct_populations(at.session_state["dpdash_dataset"].identity)
        assert [s.reason for s in statement] == ["the Bergen clinic's patients"]


def test_the_datasets_page_lists_budgets_with_their_spending(env: Path) -> None:
    at = new_session()
    at.switch_page("pages/datasets.py").run()
    assert not at.exception and any("No dataset has a budget yet" in i.value for i in at.info)
    at.switch_page("pages/data.py").run()
    upload(at, CSV)
    save_facts(at, id_column="person_id", c=3)
    set_budget(at)
    at.switch_page("pages/datasets.py").run()
    assert not at.exception
    listed = next(d for d in at.dataframe if "remaining ε" in d.value.columns).value
    row = listed.iloc[0]
    assert (row["name"], row["rows"], row["budget ε"], row["releases"], row["table kept"]) == (
        "people.csv", 6, 1.0, 0, "workspace",
    )  # fmt: skip
    assert row["identity"] == IDENTITY.split(":")[-1][:12] + "…"  # shortened as everywhere


def test_a_bad_file_is_an_error_box_that_says_what_was_wrong_and_keeps_the_table(env: Path) -> None:
    """A binary file renamed .csv, then an empty file: an error box each that says what was wrong and
    what to do, no traceback, the active table kept; a good file then replaces it."""
    at = new_session()
    before = at.session_state["dpdash_dataset"].identity
    photo = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
    at.file_uploader(key="data_upload").set_value(("photo.csv", photo, "text/csv")).run()
    [error] = [e.value.replace("\\", "") for e in at.error]
    assert error.startswith("**photo.csv was not loaded.**") and "it looks like a PNG image" in error
    assert at.session_state["dpdash_dataset"].identity == before
    at.file_uploader(key="data_upload").set_value(("empty.csv", b"", "text/csv")).run()
    assert not at.exception
    [error] = [e.value.replace("\\", "") for e in at.error]
    assert error.startswith("**empty.csv was not loaded.**") and "upload it again" in error
    assert "is empty (0 bytes): choose a file that contains a table" in error  # what was wrong, what to do
    assert not any("was not loaded" in x.label for x in at.get("expandable"))  # not an expander's title
    assert at.session_state["dpdash_dataset"].identity == before
    at.run()  # still said on the next run, until another file is chosen
    assert [e.value for e in at.error] and at.session_state["dpdash_dataset"].identity == before
    upload(at, CSV)  # a good file: the error goes
    assert at.session_state["dpdash_dataset"].identity == IDENTITY
