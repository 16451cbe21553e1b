"""A Spark table as a source: queries compiled by Ibis run as Spark SQL; only aggregates come back.

``open_spark("visits", session=spark)`` reads a table or view of an existing SparkSession (any master: a
cluster's ``spark://…``, YARN, Kubernetes, as that session was built). Without a session, one is got or
created for ``master`` (default ``local[*]``, in this process) with dpdash's defaults: no web UI, the
driver bound to 127.0.0.1 when the master is local, quiet logs. Spark compares strings by their UTF-8
bytes, which is code-point order, as pandas and DuckDB do. ``Source.close()`` leaves the session running
(it is the process's, and may be the caller's): stop it with ``session.stop()``.

A name is looked up as listed first (a view may be called ``visits 2024`` or ``it's``, or hold a dot), then as
``database.table``; Spark is given it as quoted identifiers (`` `a``b` ``), never parsed as SQL.
"""

from __future__ import annotations

from typing import Any

from dpdash.engines.limits import SourceLimits
from dpdash.engines.sources import Source
from dpdash.errors import ParameterError

__all__ = ["open_spark", "spark_session"]

DEFAULT_MASTER = "local[*]"


def spark_session(master: str = DEFAULT_MASTER, **settings: str) -> Any:
    """A SparkSession for ``master`` (got if one is running, else created) with dpdash's defaults, which
    ``settings`` (Spark configuration keys) override."""
    from pyspark.sql import SparkSession

    defaults = {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false"}
    if master.startswith("local"):
        defaults |= {"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"}
    builder = SparkSession.builder.master(master).appName("dpdash")
    for key, value in (defaults | settings).items():
        builder = builder.config(key, value)
    try:
        session = builder.getOrCreate()
    except Exception as error:  # py4j / Java start-up errors
        raise ParameterError(f"could not start Spark with master {master!r}: {error}") from None
    session.sparkContext.setLogLevel("ERROR")
    return session


def open_spark(table: str, *, master: str | None = None, session: Any = None) -> Source:
    """The table or view ``table`` (``db.table`` for a catalog database) of ``session``, or of the
    session :func:`spark_session` gets for ``master``."""
    import ibis

    if session is None:
        session = spark_session(master or DEFAULT_MASTER)
    shown = session.sparkContext.master
    backend = ibis.pyspark.connect(session)
    database, name, names = _split(backend, table, shown)
    if name not in names:
        listed = ", ".join(repr(n) for n in names[:20]) or "none"
        raise ParameterError(f"no table {table!r} in Spark ({shown}) (tables: {listed})")
    expr = _table(backend, session, database, name)
    described = f"table {table!r} of Spark ({shown})"
    SourceLimits().check_columns(len(expr.columns), described)
    qualified = _resolve(session, database, name)
    names = tuple(dict.fromkeys((qualified, name)))
    return Source(expr, backend, described, f"spark:{shown}#{qualified}", owned=False, names=names)


def _split(backend: Any, table: str, shown: str) -> tuple[str, str, list[str]]:
    """(database, name, the names listed there): ``table`` itself if the current database lists it, else
    split at its last dot."""
    try:
        names = backend.list_tables()
        if table in names:
            return "", table, names
        database, _, name = table.rpartition(".")
        return database, name, (backend.list_tables(database=database) if database else names)
    except Exception as error:
        raise ParameterError(f"could not list the tables of Spark ({shown}): {error}") from None


def quoted(*parts: str) -> str:
    """Spark SQL's quoted multi-part identifier: each part in backticks, a backtick in it doubled."""
    return ".".join("`" + part.replace("`", "``") + "`" for part in parts if part)


def _table(backend: Any, session: Any, database: str, name: str) -> Any:
    """The Ibis table of ``database.name``, its schema read with the name quoted (Ibis' own ``table`` hands
    Spark the bare name to parse, which fails on a space or a quote); Ibis quotes it in the SQL it writes."""
    from ibis.backends.pyspark.datatypes import PySparkType
    from ibis.expr import operations as ops
    from ibis.expr import schema as sch

    schema = sch.Schema(PySparkType.to_ibis(session.table(quoted(database, name)).schema))
    namespace = ops.Namespace(database=database or None)
    return ops.DatabaseTable(name, schema=schema, source=backend, namespace=namespace).to_expr()


def _resolve(session: Any, database: str, name: str) -> str:
    """The table as Spark's catalog resolves it: ``database.table`` for a catalog table (``visits`` and
    ``default.visits`` are one), the name alone for a temporary view; as given if the catalog cannot say."""
    given = f"{database}.{name}" if database else name
    try:
        found = session.catalog.getTable(quoted(database, name))
    except Exception:  # py4j / analysis errors: keep the spelling given
        return given
    namespace = list(getattr(found, "namespace", None) or [])
    if getattr(found, "isTemporary", False) or not namespace:
        return str(found.name)
    return ".".join([*map(str, namespace), str(found.name)])
