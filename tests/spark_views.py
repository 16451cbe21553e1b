"""A pandas DataFrame as a Spark temporary view, for the tests that run on the suite's Spark session."""

from __future__ import annotations

from typing import Any

import pandas as pd


def view(spark: Any, df: pd.DataFrame, name: str) -> None:
    """``df`` as the temporary view ``name`` (an identifier: quote one with spaces or dots); pandas'
    missing values (NaN, None) become Spark NULLs. The rows are checkpointed into Spark's own storage, as
    a table's are: a DataFrame made from Python rows is otherwise read again by Python worker processes in
    every job (twice the time of these tests, and a fork of this process each time)."""
    rows = df.astype(object).where(df.notna(), None)
    spark.createDataFrame(rows, schema=_schema(df)).localCheckpoint().createOrReplaceTempView(name)


def _schema(df: pd.DataFrame) -> Any:
    from pyspark.sql import types

    kinds = {"f": types.DoubleType(), "i": types.LongType(), "b": types.BooleanType()}
    return types.StructType(
        [types.StructField(str(c), kinds.get(df[c].dtype.kind, types.StringType()), True) for c in df.columns]
    )
