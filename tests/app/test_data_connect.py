"""AppTest of the Data page's Connect section (issue 15): a table connected where it lives (a Parquet folder
the test writes, a DuckDB file, a PostgreSQL table with a password, a Spark view) becomes the active table
without being loaded; its facts, budget and releases work as an upload's, with the true answers computed in
its engine; a new session connects it again from the workspace; a changed source is not taken for the
same dataset; a password is kept nowhere."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dpdash.engines import SourceSpec, open_files
from dpdash.ledger import Ledger
from dpdash.queries import Sum
from dpdash.workspace import Workspace
from tests.app.test_data_page_upload import new_session, save_facts, set_budget, sidebar_text, widget

if TYPE_CHECKING:
    from tests.servers import PostgresServer



@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DPDASH_LEDGER", str(tmp_path / "ledger.sqlite"))
    monkeypatch.setenv("DPDASH_WORKSPACE", str(tmp_path / "workspace"))
    return tmp_path
FILES = "Parquet or CSV files (a file, a folder or a glob)"
HOSTILE = 'visits`](javascript:alert(1)) <b>x</b> $1$ *'


def people(seed: int = 1, rows: int = 1200) -> pd.DataFrame:
    """About 3 rows per person; ages 0-99 (some beyond the declared bounds); two regions."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "person_id": rng.integers(0, rows // 3, rows),
        "age": rng.integers(-5, 110, rows),
        "region": rng.choice(["north", "south"], rows),
    })  # fmt: skip


def write_folder(folder: Path, df: pd.DataFrame) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    half = len(df) // 2
    df.iloc[:half].to_parquet(folder / "part-1.parquet")
    df.iloc[half:].to_parquet(folder / "part-2.parquet")
    return folder


def connect(at: AppTest, kind: str, **fields: str) -> None:
    """Fill the Connect form as a person would (``fields``: widget key suffix → text) and submit it."""
    at.selectbox(key="data_connect_kind").set_value(kind).run()
    for key, value in fields.items():
        at.text_input(key=f"data_connect_{key}").input(value)
    widget(at.button, "Connect").click().run()
    assert not at.exception


def plain(text: str) -> str:
    """Markdown as read on screen: without md()'s backslash escapes and word joiners."""
    return text.replace("\\", "").replace("\u2060", "")


def active(at: AppTest):  # type: ignore[no-untyped-def]
    return at.session_state["dpdash_dataset"]


def release_sum(at: AppTest) -> None:
    """Release the clamped sum of age (Laplace, the page's ε) on the Query & release page."""
    at.switch_page("pages/release.py").run()
    at.selectbox(key="release_kind").set_value("Sum").run()
    at.button(key="release_button").click().run()
    at.button(key="release_confirm").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]


def test_a_parquet_folder_is_connected_released_from_and_reconnected(env: Path) -> None:
    df = people()
    folder = write_folder(env / "visits", df)
    at = new_session()
    connect(at, FILES, path=str(folder))
    assert not at.error, [e.value for e in at.error]
    table = active(at)
    assert table.engine is not None and table.rows == len(df) and len(table.data) == 200
    assert table.identity == open_files(folder).fingerprint() == table.fingerprint
    text = plain(" ".join(m.value for m in at.markdown))
    assert "1,200 rows" in text and "visits" in text
    assert not any((e.key or "").startswith("data_types_editor_") for e in at.dataframe)  # types: the schema
    assert "person_id: int64" in plain(" ".join(c.value for c in at.caption))
    assert "1,200 rows" in sidebar_text(at)

    save_facts(at, bounds={"age": {"lower": 0, "upper": 100}}, id_column="person_id", c=3)
    assert active(at).facts.unit.rows_per_person == 3 and active(at).engine is not None
    set_budget(at)
    release_sum(at)
    ledger = Ledger()
    record = ledger.find_dataset(table.identity)
    assert record is not None and ledger.status(record).entries == 1
    (published,) = ledger.published(record).values()
    expected = Sum(column="age", bounds=(0, 100), facts=active(at).facts.unit).evaluate(df).values
    assert published["dataset_identity"] == table.identity
    last = at.session_state["release_last"]
    assert last.true_values == tuple(float(v) for v in expected)  # computed in DuckDB, pandas' answer
    text = plain(" ".join(c.value for c in at.caption))
    assert "connected where it lives" in text
    downloads = {b.proto.label for b in at.get("download_button")}
    assert "JSON release record" in downloads  # the downloads are there, but not the two that read a file
    assert not downloads & {"Python script (dpdash)", "Jupyter notebook"}

    # The workspace keeps where it lives (no bytes); a new session connects it again, facts and budget kept.
    kept = Workspace().table(table.identity)
    assert kept is not None and kept.connection == SourceSpec(kind="files", path=str(folder))
    assert kept.n_bytes == 0
    assert not (Workspace().path / "tables" / table.identity.split(":")[1] / "source.bin").exists()
    again = new_session()
    restored = active(again)
    assert restored.engine is not None and restored.identity == table.identity
    assert restored.facts.unit.rows_per_person == 3 and "1 release" in sidebar_text(again)
    again.switch_page("pages/datasets.py").run()
    (row,) = next(d for d in again.dataframe if "remaining ε" in d.value.columns).value.to_dict("records")
    assert (row["rows"], row["releases"], row["table kept"]) == (1200, 1, "connection")

    # A rewritten file is not the same dataset: the next session says so and opens the example instead.
    write_folder(folder, people(seed=2))
    changed = new_session()
    warnings = plain(" ".join(w.value for w in changed.warning))
    assert "has changed since it was connected" in warnings
    assert active(changed).engine is None


def test_a_file_rewritten_after_connect_is_not_released_and_nothing_is_spent(env: Path) -> None:
    """Connect a file, set its budget, rewrite it (the same size, other ages): the release is refused with
    what to do, and the ledger is as it was (issue 25, item 9: it spent the old identity's budget)."""
    df = people()
    path = env / "visits.csv"
    df.to_csv(path, index=False)
    at = new_session()
    connect(at, FILES, path=str(path))
    save_facts(at, bounds={"age": {"lower": 0, "upper": 100}}, id_column="person_id", c=3)
    set_budget(at)
    identity = active(at).identity
    ledger = Ledger()
    record = ledger.find_dataset(identity)
    assert record is not None and ledger.status(record).entries == 0
    text = path.read_text()
    rewritten = text.replace(",north", ",south", 50)
    assert len(rewritten) == len(text) and rewritten != text
    path.write_text(rewritten)
    at.switch_page("pages/release.py").run()
    at.selectbox(key="release_kind").set_value("Sum").run()
    at.button(key="release_button").click().run()
    at.button(key="release_confirm").click().run()
    assert not at.exception
    errors = plain(" ".join(e.value for e in at.error))
    assert "Not released" in errors and "changed since it was connected" in errors
    assert "connect it again" in errors
    assert ledger.status(record).entries == 0 and not ledger.published(record)
    assert "release_last" not in at.session_state


def _draw_rewrite_record(path: str) -> None:
    import streamlit as st

    from dpdash import Laplace
    from dpdash.accounting import Budget
    from dpdash.engines import SourceSpec
    from dpdash.errors import DPDashError
    from dpdash.queries import Count
    from ui import guarded, ledger_session, state

    spec = SourceSpec(kind="files", path=path)
    table = state.use_connection(spec, spec.open())
    record = ledger_session.ledger().add_dataset(
        name="visits", fingerprint=table.identity, budget=Budget(epsilon=1.0)
    )
    drawn = guarded.draw_release(table, Count(), Laplace, epsilon=0.1, delta=None, confidence=0.95,
                               postprocess=[])  # fmt: skip
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("1,50,north\n")  # a row more, after the draw
    try:
        guarded.record_release(table, record, drawn, "after-a-rewrite")
    except DPDashError as error:
        st.session_state["refused"] = str(error)


def test_a_file_rewritten_between_the_draw_and_the_record_spends_nothing(env: Path) -> None:
    """The spend checks the files again: one rewritten after the values were drawn (and before they are
    shown) is refused, nothing recorded (issue 25, item 9)."""
    path = env / "visits.csv"
    people().to_csv(path, index=False)
    at = AppTest.from_function(_draw_rewrite_record, args=(str(path),), default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "changed since it was connected" in at.session_state["refused"]
    ledger = Ledger()
    (record,) = ledger.datasets()
    assert ledger.status(record).entries == 0


def test_a_bad_connection_says_what_is_wrong_and_keeps_the_table(env: Path) -> None:
    at = new_session()
    before = active(at).identity
    connect(at, FILES, path=str(env / "nowhere" / "*.parquet"))
    (error,) = at.error
    assert "Not connected: no Parquet or CSV file at" in plain(error.value)
    assert active(at).identity == before
    connect(at, "DuckDB database file", duckdb_path=str(env / "missing.duckdb"), duckdb_table="t")
    assert "no DuckDB database file at" in plain(at.error[0].value)
    connect(at, "PostgreSQL table", url="mysql://u@h/db", pg_table="t")
    assert "starts with postgresql://" in plain(at.error[0].value)
    assert active(at).identity == before and not at.exception


def test_a_connect_past_a_limit_says_which_and_keeps_the_table(
    env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 25: too many files (the cap lowered to 1 for the test) is refused on the page, nothing loaded."""
    from dpdash.engines import SourceLimits, sources

    monkeypatch.setattr(sources, "SourceLimits", lambda: SourceLimits(files=1))
    at = new_session()
    before = active(at).identity
    connect(at, FILES, path=str(write_folder(env / "parts", people())))
    (error,) = at.error
    assert "Not connected:" in plain(error.value) and "more than 1 file," in plain(error.value)
    assert "narrower folder or glob" in plain(error.value)
    assert active(at).identity == before and active(at).engine is None


def test_a_duckdb_file_with_a_hostile_table_name(env: Path) -> None:
    df = people(3, rows=300)
    path = env / "warehouse.duckdb"
    with duckdb.connect(str(path)) as con:
        con.register("frame", df)
        con.execute(f'CREATE TABLE "{HOSTILE.replace(chr(34), chr(34) * 2)}" AS SELECT * FROM frame')
    at = new_session()
    connect(at, "DuckDB database file", duckdb_path=str(path), duckdb_table=HOSTILE)
    assert not at.error, [e.value for e in at.error]
    table = active(at)
    assert table.rows == 300 and table.name == HOSTILE
    shown = " ".join(m.value for m in at.markdown)
    assert "<b>" not in shown and "](javascript" not in shown  # escaped: Markdown shows it as text


def test_a_postgres_password_is_used_to_connect_and_kept_nowhere(env: Path, postgres: PostgresServer) -> None:
    from psycopg import sql

    secret = "s3cr3t-Connect-only"
    postgres.execute(sql.SQL("DROP ROLE IF EXISTS app_reader"))
    postgres.execute(sql.SQL("CREATE ROLE app_reader LOGIN PASSWORD {}").format(sql.Literal(secret)))
    df = people(4, rows=600)
    postgres.load(df, "clinic visits")
    postgres.execute(sql.SQL('GRANT SELECT ON "clinic visits" TO app_reader'))
    at = new_session()
    connect(at, "PostgreSQL table", url=postgres.url("app_reader"), password=secret, pg_table="clinic visits")
    assert not at.error, [e.value for e in at.error]
    table = active(at)
    assert table.rows == 600 and at.text_input(key="data_connect_password").value == ""  # not kept
    save_facts(at, bounds={"age": {"lower": 0, "upper": 100}})
    set_budget(at)
    release_sum(at)
    expected = Sum(column="age", bounds=(0, 100)).evaluate(df).values
    assert at.session_state["release_last"].true_values == tuple(float(v) for v in expected)
    # Nowhere on disk: not the workspace, not the ledger (its records and the release's published values).
    for path in [env / "ledger.sqlite", *(env / "workspace").rglob("*")]:
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    assert json.dumps(Workspace().table(table.identity).to_dict()).count("app_reader@127.0.0.1") == 1
    # A new session has no password: it says to connect again, and the example is active meanwhile.
    again = new_session()
    warnings = plain(" ".join(w.value for w in again.warning))
    assert "could not be opened again" in warnings and "connect it again" in warnings
    assert secret not in warnings and active(again).engine is None


def test_a_spark_view_is_connected(env: Path, spark) -> None:  # type: ignore[no-untyped-def]
    from tests.spark_views import view

    df = people(5, rows=300)
    view(spark, df, "app_visits")
    at = new_session()
    connect(at, "Spark table", master=spark.sparkContext.master, spark_table="app_visits")
    assert not at.error, [e.value for e in at.error]
    table = active(at)
    assert table.rows == 300 and table.engine is not None
    save_facts(at, bounds={"age": {"lower": 0, "upper": 100}})
    set_budget(at)
    release_sum(at)
    expected = Sum(column="age", bounds=(0, 100)).evaluate(df).values
    assert at.session_state["release_last"].true_values == tuple(float(v) for v in expected)
