"""The same queries through a real PostgreSQL (Debian's, started by the ``postgres`` fixture on 127.0.0.1):
the same true answers and owner reports as pandas (tests/engines/compare.py), and a password that never
shows (issue 15)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd
import pytest
from psycopg import sql

from dpdash.engines import evaluate, open_postgres
from dpdash.engines.postgres import redact
from dpdash.errors import ParameterError
from dpdash.facts import Facts
from dpdash.queries import Count, Histogram, Where
from tests.engines.compare import check
from tests.engines.test_differential import AGE, FACTS, ID, REGION, integer_ids, queries, table
from tests.panel import ID_KINDS, check_uniform_choice, panel

if TYPE_CHECKING:
    from tests.servers import PostgresServer

PASSWORD = "p@ss:/w%rd\"'; --"
READER = "reader"


@pytest.fixture(scope="module")
def server(postgres: PostgresServer) -> PostgresServer:
    """The session's cluster with a password-protected read-only role and the test tables (the role made
    once; a later module that asks for it finds it, with its password and grants set again)."""
    postgres.execute(
        sql.SQL("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = {}) THEN CREATE ROLE {} "
                "LOGIN; END IF; END $$").format(sql.Literal(READER), sql.Identifier(READER))
    )  # fmt: skip
    postgres.execute(
        sql.SQL("ALTER ROLE {} LOGIN PASSWORD {}").format(sql.Identifier(READER), sql.Literal(PASSWORD))
    )
    postgres.execute(
        sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA public TO {}").format(sql.Identifier(READER))
    )
    postgres.execute(
        sql.SQL("ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO {}").format(
            sql.Identifier(READER)
        )
    )
    return postgres


def agrees(server: PostgresServer, df: pd.DataFrame, name: str, facts: Facts, grouped: bool = False) -> None:
    """``df`` loaded as table ``name``: every query with ``facts`` gives pandas' answers and reports
    (``grouped``: also the queries with per-group bounds)."""
    server.load(df, name)
    source = open_postgres(server.url(READER, PASSWORD), name)
    try:
        for query in queries(facts, grouped=grouped):
            check(query, df, source)
    finally:
        source.close()


@pytest.mark.parametrize("facts", FACTS, ids=["trusted", "c=1", "c=3"])
def test_postgres_agrees_with_pandas(server: PostgresServer, facts: Facts) -> None:
    agrees(server, table(1), "people", facts, grouped=facts.rows_per_person == 3)


def test_truncation_and_string_ids_in_postgres(server: PostgresServer) -> None:
    df = table(5, rows=2000, people=60)
    df[ID] = df[ID].map(lambda v: None if v != v else f"p'{int(v) % 40}\"")
    agrees(server, df, "many rows", Facts(rows_per_person=2, id_column=ID))


def test_integer_ids_in_postgres(server: PostgresServer) -> None:
    agrees(server, integer_ids(12), "integer ids", Facts(rows_per_person=2, id_column=ID), grouped=True)


@pytest.mark.parametrize("ids", [kind for kind in ID_KINDS if kind != "small"])
def test_truncation_keeps_a_uniform_choice_in_postgres(server: PostgresServer, ids: str) -> None:
    """The 10⁶-row panel of tests/panel.py, as on pandas and DuckDB (test_truncation_bias.py), with 64-bit
    and text ids (small ids are the same bigint column and key as 64-bit ones)."""
    df = panel(1_000_000, ids)
    server.load(df, f"panel {ids}")
    source = open_postgres(server.url(READER, PASSWORD), f"panel {ids}")
    try:
        check_uniform_choice(source, df)
    finally:
        source.close()


def test_strings_compare_by_code_point_whatever_the_collation(server: PostgresServer) -> None:
    """A database whose collation sorts 'b' before 'C' (en-US-like) still compares by code point."""
    server.execute('DROP DATABASE IF EXISTS "icu"')
    server.execute("CREATE DATABASE \"icu\" TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' "
                   "LOCALE 'C.UTF-8'")  # fmt: skip
    df = table(2, rows=300)
    df[REGION] = ["b", "C", "a", "B", None, "é"] * 50
    server.load(df, "t", database="icu")
    server.execute(sql.SQL("GRANT SELECT ON t TO {}").format(sql.Identifier(READER)), database="icu")
    source = open_postgres(server.url(READER, PASSWORD, "icu"), "t")
    try:
        for query in [Count(where=[Where(REGION, ">=", "a")]), Count(where=[Where(REGION, "<", "C")]),
                      Histogram(column=REGION, categories=("a", "b", "B", "C", "é"))]:  # fmt: skip
            check(query, df, source)
        for query in queries(Facts(rows_per_person=1, id_column=ID)):
            check(query, df, source)
    finally:
        source.close()


def test_the_password_never_shows(server: PostgresServer) -> None:
    url = server.url(READER, PASSWORD)
    assert PASSWORD not in url  # percent-encoded in the URL
    server.load(table(3, rows=50), "small")
    source = open_postgres(url, "small")
    try:
        for text in (source.description, source.location, redact(url)):
            assert "p@ss" not in text and "w%rd" not in text and "p%40ss" not in text
        assert source.location.startswith("postgresql://system-")  # the server as it says, not the URL
        assert source.location.endswith("/postgres#public.small")
        assert source.row_count() == 50
    finally:
        source.close()
    with pytest.raises(ParameterError) as wrong:
        open_postgres(server.url(READER, PASSWORD + "x"), "small")
    assert "could not connect to postgresql://reader@127.0.0.1" in str(wrong.value)
    assert "p@ss" not in str(wrong.value) and "w%rd" not in str(wrong.value)
    # The password given apart (as the app's password field does) wins over none in the URL.
    source = open_postgres(server.url(READER), "small", password=PASSWORD)
    source.close()
    with pytest.raises(
        ParameterError, match=r"no table 'nope' in postgresql://reader@127\.0\.0\.1:\d+/postgres"
    ):
        open_postgres(url, "nope")
    with pytest.raises(ParameterError, match="starts with postgresql://"):
        open_postgres("mysql://u:secret@h/db", "small")


def test_the_source_is_read_only(server: PostgresServer) -> None:
    server.load(table(4, rows=20), "kept")
    source = open_postgres(server.url(READER, PASSWORD), "kept")
    try:
        with pytest.raises(Exception, match="read-only transaction"):
            source.backend.raw_sql('CREATE TABLE "x" (a int)')
        assert evaluate(Count(), source).values.tolist() == [20]
        assert AGE in source.schema()
    finally:
        source.close()


def test_the_fingerprint_has_no_password_and_follows_the_table(server: PostgresServer) -> None:
    server.load(table(8, rows=40), "fp")
    one = open_postgres(server.url(READER, PASSWORD), "fp")
    other = open_postgres(server.url(READER), "fp", password=PASSWORD)  # the same table, password apart
    first = one.fingerprint()
    assert other.fingerprint() == first and "p@ss" not in one.location
    server.execute('INSERT INTO "fp" SELECT * FROM "fp" LIMIT 1')
    assert one.fingerprint() != first  # a row more: schema and row count come from the engine
    one.close(), other.close()


def test_every_spelling_of_a_table_is_one_identity(server: PostgresServer) -> None:
    """``visits``, ``public.visits`` and ``.visits``, through any user, are one table: one location and
    fingerprint, resolved by the database, and the names a roles rule matches; a table of that name in
    another schema is another (issue 25, item 4)."""
    server.load(table(9, rows=30), "visits")
    server.execute("CREATE SCHEMA IF NOT EXISTS other")
    server.execute("DROP TABLE IF EXISTS other.visits")
    server.execute("CREATE TABLE other.visits AS SELECT * FROM public.visits")
    server.execute(f'GRANT USAGE ON SCHEMA other TO "{READER}"; GRANT SELECT ON other.visits TO "{READER}"')
    sources = [open_postgres(server.url(READER, PASSWORD), spelling) for spelling in
               ("visits", "public.visits", ".visits")]  # fmt: skip
    server.execute("DROP ROLE IF EXISTS second_reader")
    server.execute("CREATE ROLE second_reader LOGIN PASSWORD 'x'")
    server.execute("GRANT SELECT ON public.visits TO second_reader")
    sources.append(open_postgres(server.url("second_reader", "x"), "visits"))  # another user: the same table
    try:
        (location,) = {s.location for s in sources}
        assert location.endswith("/postgres#public.visits") and READER not in location, location
        assert len({s.fingerprint() for s in sources}) == 1
        assert {s.names for s in sources} == {("public.visits", "visits")}
        other = open_postgres(server.url(READER, PASSWORD), "other.visits")
        assert other.location != location and other.names == ("other.visits", "visits")
        other.close()
    finally:
        for source in sources:
            source.close()
