"""AppTest of re-uploads: the same rows (shuffled, or as Parquet) are said to be the same dataset, with one
short identity on the Data page, the sidebar and the Datasets page; a new version that continues a budget
gets the previous version's bounds and categories declared again."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dpdash.facts import Facts
from dpdash.identity import short_identity
from dpdash.ledger import fingerprint
from dpdash.loading import load_table
from dpdash.release import dataset_fingerprint
from tests.app.test_data_page_upload import (
    CSV,
    NEWER,
    editor,
    facts,
    new_session,
    save_facts,
    set_budget,
    sidebar_text,
    unit_widgets,
    upload,
)

# The same rows as CSV in another order, and as Parquet (other bytes, another exact-table fingerprint).
SHUFFLED = b"person_id,age,city\n3,51,Oslo\n1,30,Oslo\n3,52,Oslo\n2,40,Bergen\n1,31,Oslo\n3,50,Oslo\n"
IDENTITY = fingerprint(load_table(CSV, "males.csv").data)
SHORT = short_identity(IDENTITY)


def parquet(csv: bytes) -> bytes:
    buffer = io.BytesIO()
    pd.read_csv(io.BytesIO(csv)).to_parquet(buffer)
    return buffer.getvalue()


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DPDASH_LEDGER", str(tmp_path / "ledger.sqlite"))
    monkeypatch.setenv("DPDASH_WORKSPACE", str(tmp_path / "workspace"))
    return tmp_path


def text(elements) -> str:  # type: ignore[no-untyped-def]
    return " ".join(str(getattr(e, "value", "")) for e in elements).replace("\\", "")


def shown_identities(at: AppTest) -> set[str]:
    """Every shortened identity (12 hex digits and "…") the main area and the sidebar show."""
    return set(re.findall(r"[0-9a-f]{12}…", text(at.main) + " " + sidebar_text(at)))


def test_the_short_identity_is_the_digest_cut_in_one_way() -> None:
    assert IDENTITY.removeprefix("sha256:")[:12] + "…" == SHORT
    assert short_identity("abc") == "abc"  # nothing to cut: no "…"


def test_the_same_rows_again_say_so_and_show_one_identity_everywhere(env: Path) -> None:
    at = new_session()
    upload(at, CSV, "males.csv")
    assert not any("Same rows as" in s.value for s in at.success)  # new rows: nothing to say
    save_facts(at, bounds={"age": {"lower": 0, "upper": 120}}, id_column="person_id", c=3)
    set_budget(at)
    assert shown_identities(at) == {SHORT}
    for name, data in (("males-shuffled.csv", SHUFFLED), ("males.parquet", parquet(CSV))):
        at.file_uploader(key="data_upload").set_value((name, data, "application/octet-stream")).run()
        assert not at.exception and not at.error, [e.value for e in at.error]
        table = at.session_state["dpdash_dataset"]
        assert table.identity == IDENTITY  # the same dataset; the shuffled copy is another exact table
        exact = dataset_fingerprint(load_table(CSV, "x.csv").data)
        assert name.endswith(".parquet") or table.fingerprint != exact
        [said] = [s.value.replace("\\", "") for s in at.success if "Same rows as" in s.value]
        assert re.fullmatch(
            rf"\*\*Same rows as males\.csv\*\* \(loaded \d{{4}}-\d\d-\d\d \d\d:\d\d UTC\): its budget "
            rf"continues\. .* identity `{re.escape(SHORT)}`\.",
            said,
        ), said
        assert f"identity `{SHORT}`" in text(at.markdown)  # the Active table line
        assert IDENTITY in [c.value for c in at.code]  # and whole, to copy
        assert f"identity `{SHORT}`" in sidebar_text(at) and "No budget set" not in sidebar_text(at)
        assert shown_identities(at) == {SHORT}  # one identity, shortened one way
        assert facts(at).unit == Facts(rows_per_person=3, id_column="person_id")
    at.switch_page("pages/datasets.py").run()
    assert not at.exception
    listed = next(d for d in at.dataframe if "remaining ε" in d.value.columns).value
    assert listed["identity"].tolist() == [SHORT] and listed["name"].tolist() == ["males.csv"]
    assert at.selectbox(key="datasets_choice").options == [f"males.csv · {SHORT}"]
    assert shown_identities(at) == {SHORT}
    # Another table made active: the words about the re-upload go with it.
    at.switch_page("pages/data.py").run()
    at.button(key="data_example_tips").click().run()
    assert not any("Same rows as" in s.value for s in at.success)


def test_the_same_rows_without_a_budget_keep_their_facts_and_say_so(env: Path) -> None:
    at = new_session()
    upload(at, CSV, "males.csv")
    save_facts(at, bounds={"age": {"lower": 0, "upper": 120}})
    upload(at, SHUFFLED, "again.csv")
    [said] = [s.value.replace("\\", "") for s in at.success if "Same rows as" in s.value]
    assert "Same rows as males.csv" in said and "public facts are kept (no budget is set yet)" in said
    assert "age" in facts(at).bounds


def test_a_continued_version_gets_its_bounds_and_categories_declared_again(env: Path) -> None:
    at = new_session()
    upload(at, CSV, "males.csv")
    save_facts(
        at,
        bounds={"age": {"lower": 0, "upper": 120}},
        categories={"city": {"categories": "Oslo, Bergen", "k": 1, "m": 3}},
        id_column="person_id",
        c=3,
    )
    set_budget(at)
    # The new version: one more person, and a column that is gone ("city" renamed) plus a new one.
    newer = NEWER.replace(b"city", b"town")
    upload(at, NEWER, "males-2.csv")
    assert not facts(at).bounds and not facts(at).categories  # nothing declared for it yet
    at.button(key="data_continue_budget").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    declared = facts(at)
    assert (declared.bounds["age"].lower, declared.bounds["age"].upper) == (0.0, 120.0)
    assert declared.categories == {"city": ("Oslo", "Bergen")}
    assert declared.group_bounds["city"].to_list() == [1, 3]
    assert unit_widgets(at) == ("person_id", 3, "add_remove", True)  # the unit comes back, locked
    notice = text(at.info)
    assert "carried over from the previous version" in notice and "(males.csv)" in notice
    assert "edit them here before this version's releases spend the budget" in notice
    # The grids show them declared, editable; kept in the workspace for the next session.
    bounds = editor(at, "data_bounds_editor_").value.set_index("column")
    assert bounds.loc["age", ["lower", "upper"]].tolist() == [0.0, 120.0]
    assert editor(at, "data_categories_editor_").value.set_index("column").loc["city", "categories"] == (
        "Oslo, Bergen"
    )
    again = new_session()
    assert again.session_state["dpdash_dataset"].facts.categories == {"city": ("Oslo", "Bergen")}
    # Saving this version's facts makes them its own: the notice goes.
    save_facts(at, bounds={"age": {"lower": 0, "upper": 110}})
    assert facts(at).bounds["age"].upper == 110.0
    assert "carried over" not in text(at.info)
    # A version whose columns no longer fit gets only what still fits.
    at.switch_page("pages/data.py").run()
    upload(at, newer + b"5,70,Oslo\n", "males-2.csv")  # found by the name of the version before
    at.button(key="data_continue_budget").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert facts(at).bounds["age"].upper == 110.0 and not facts(at).categories  # "city" is gone
    assert "carried over from the previous version" in text(at.info) and "(males-2.csv)" in text(at.info)
