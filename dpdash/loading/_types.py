"""Column types: the first guess of each column's kind, settling text-like columns after reading, and
changing a column's type without losing values silently."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from warnings import catch_warnings, simplefilter

import numpy as np
import pandas as pd

from dpdash import _validation as check
from dpdash.errors import ParameterError, ParameterTypeError
from dpdash.loading._common import _EXAMPLES, DataLoadError, _clip

ColumnKind = Literal["numeric", "integer", "categorical", "boolean", "text", "datetime"]
#: The column types the app shows and lets people change.
COLUMN_KINDS: tuple[ColumnKind, ...] = ("numeric", "integer", "categorical", "boolean", "text", "datetime")
#: A text column with at most this many distinct values (each seen twice on average) is categorical.
MAX_CATEGORIES = 100


_NUMBER_SAMPLE = 2_000


class ColumnConversionError(DataLoadError):
    """Changing a column's type would lose values; nothing was changed.

    Attributes:
        column: the column's name.
        kind: the type asked for.
        invalid_count: how many non-missing values cannot be converted (they would become missing).
        examples: up to five of them, as text.
    """

    def __init__(
        self, message: str, *, column: str, kind: str, invalid_count: int, examples: tuple[str, ...]
    ):
        super().__init__(message)
        self.column = column
        self.kind = kind
        self.invalid_count = invalid_count
        self.examples = examples


@dataclass(frozen=True, slots=True)
class MixedColumn:
    """A column that is mostly numbers but holds some text, so it was kept as text."""

    column: str
    non_numeric: int
    non_empty: int
    examples: tuple[str, ...]


def _settle_types(
    frame: pd.DataFrame, separator: str | None, warnings: list[str]
) -> tuple[pd.DataFrame, list[MixedColumn]]:
    """Give text-like columns their real type: numbers stored as text become numbers, decimal commas
    (in ;-separated files) become numbers, True/False become booleans, everything else text (``str``).
    Columns that are mostly numbers with some text stay text and are reported."""
    mixed = []
    columns = {}
    for column in frame.columns:
        s = frame[column]
        if not (s.dtype == object or pd.api.types.is_string_dtype(s.dtype)):
            continue
        values = s.dropna()
        if values.empty:
            continue
        if s.dtype == object and _all_bool(values):
            columns[column] = s.astype("boolean") if len(values) < len(s) else s.astype(bool)
            continue
        text = _text_of(s)
        if separator == ";" and _decimal_commas(text):
            columns[column] = pd.to_numeric(text.str.replace(",", ".", regex=False), errors="coerce")
            continue
        try:
            looks_numeric = pd.to_numeric(values.iloc[:_NUMBER_SAMPLE], errors="coerce").notna().mean() >= 0.5
        except (TypeError, ValueError):  # lists, dicts, dates: not numbers
            looks_numeric = False
        if not looks_numeric:
            if s.dtype == object:
                columns[column] = text
            continue
        numbers = pd.to_numeric(text.str.strip(), errors="coerce")
        bad = numbers.isna() & s.notna()
        n_bad = int(bad.sum())
        if n_bad == 0:
            columns[column] = numbers
            continue
        non_empty = len(values)
        if n_bad * 2 > non_empty:
            if s.dtype == object:
                columns[column] = text
            continue
        examples = tuple(dict.fromkeys(str(v) for v in s[bad].iloc[:1000]))[:_EXAMPLES]
        mixed.append(MixedColumn(str(column), n_bad, non_empty, examples))
        warnings.append(
            f"column {column!r} looks numeric, but {n_bad} of {non_empty} values are not numbers "
            f"(e.g. {', '.join(repr(e) for e in examples)}); it was kept as text. Fix those values in the "
            "file, or change the column's type to numeric and they become missing values"
        )
        columns[column] = text
    if columns:
        frame = frame.assign(**columns)
    return frame, mixed


def _as_text(s: pd.Series) -> pd.Series:
    """``s`` as a ``str`` column, missing values kept missing; whole floats written without ".0"."""

    def show(value: object) -> object:
        if (
            value is None
            or value is pd.NA
            or value is pd.NaT
            or (isinstance(value, float) and np.isnan(value))
        ):
            return np.nan
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        if isinstance(value, pd.Timestamp):
            return value.isoformat()
        return str(value)

    return pd.Series([show(v) for v in s.to_numpy(dtype=object)], index=s.index, dtype="str", name=s.name)


def _all_bool(values: pd.Series) -> bool:
    """Every value is a bool (checked on the head first, so text columns answer fast)."""

    def is_bool(v: object) -> bool:
        return isinstance(v, bool | np.bool_)

    return all(map(is_bool, values.iloc[:100])) and all(map(is_bool, values))


def _text_of(s: pd.Series) -> pd.Series:
    """``s`` itself when it is already a ``str`` column, else ``_as_text(s)``."""
    if s.dtype != object and pd.api.types.is_string_dtype(s.dtype):
        return s
    return _as_text(s)


def _decimal_commas(text: pd.Series) -> bool:
    values = text.dropna()
    return (
        not values.empty
        and bool(values.str.contains(",", regex=False).any())
        and bool(values.str.fullmatch(r"\s*[+-]?\d+(,\d+)?\s*").all())
    )


# --- column types ------------------------------------------------------------------------------------


def column_types(df: pd.DataFrame) -> dict[str, ColumnKind]:
    """A first guess of each column's kind, one of ``COLUMN_KINDS``.

    - ``boolean``: a bool column (or one holding only True/False values);
    - ``integer``: an integer column, or a float column with missing values whose other values are all
      whole numbers (how a file's integer column with gaps arrives);
    - ``numeric``: any other number;
    - ``datetime``: dates and times;
    - ``categorical``: text (or a pandas category) with at most ``MAX_CATEGORIES`` distinct values, each
      seen at least twice on average; ``text`` otherwise (names, ids, free text).

    The guess reads the data, so it is for the data owner's screen only; the kinds a person confirms
    are what the app should keep (calling this again after ``coerce_column`` guesses afresh).

    >>> column_types(pd.DataFrame({"n": [1, 2], "x": [0.5, 1.0], "c": ["a", "a"]}))
    {'n': 'integer', 'x': 'numeric', 'c': 'categorical'}
    """
    if not isinstance(df, pd.DataFrame):
        raise ParameterTypeError(f"df must be a pandas DataFrame, got df of type {type(df).__name__}")
    return {str(column): _kind(df[column]) for column in df.columns}


def _kind(s: pd.Series) -> ColumnKind:
    dtype = s.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "boolean"
    if isinstance(dtype, pd.CategoricalDtype):
        return "categorical"
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "datetime"
    if pd.api.types.is_integer_dtype(dtype):
        return "integer"
    if pd.api.types.is_float_dtype(dtype):
        values = s.to_numpy(dtype=float, na_value=np.nan)
        present = values[~np.isnan(values)]
        has_gaps = len(present) < len(values)
        whole = len(present) > 0 and bool(np.all(np.isfinite(present) & (present == np.round(present))))
        return "integer" if has_gaps and whole else "numeric"
    if pd.api.types.is_numeric_dtype(dtype):
        return "numeric"
    values = s.dropna()
    if values.empty:
        return "text"
    if isinstance(dtype, np.dtype) and dtype.kind == "O":
        if _all_bool(values):
            return "boolean"
        if all(isinstance(v, pd.Timestamp) for v in values):
            return "datetime"
    # A quick look at the head first: ids and free text have many distinct values.
    if values.iloc[: 4 * MAX_CATEGORIES].nunique() > MAX_CATEGORIES:
        return "text"
    distinct = values.nunique()
    return "categorical" if distinct <= MAX_CATEGORIES and 2 * distinct <= len(values) else "text"


# --- changing a column's type ------------------------------------------------------------------------

_TRUE = frozenset({"true", "t", "yes", "y", "1"})
_FALSE = frozenset({"false", "f", "no", "n", "0"})


def coerce_column(df: pd.DataFrame, column: str, kind: str, *, drop_invalid: bool = False) -> pd.DataFrame:
    """A copy of ``df`` with ``column`` converted to ``kind`` (one of ``COLUMN_KINDS``).

    Nothing is lost silently: if some non-missing values cannot be converted (text in a numeric column,
    2.5 in an integer column, "maybe" in a yes/no column, a date in an unknown format), a
    ``ColumnConversionError`` says how many and shows examples, unless ``drop_invalid`` is True, in
    which case those values become missing. Results: ``numeric`` → float64; ``integer`` → int64, or
    float64 when values are missing; ``boolean`` → bool, or pandas' nullable ``boolean`` with missing
    values (true/false, yes/no, y/n, t/f, 1/0 in any case); ``categorical`` and ``text`` → ``str``
    (never lossy); ``datetime`` → datetime64.

    >>> df = pd.DataFrame({"age": ["34", "51", "unknown"]})
    >>> coerce_column(df, "age", "integer", drop_invalid=True)["age"].tolist()
    [34.0, 51.0, nan]
    """
    if not isinstance(df, pd.DataFrame):
        raise ParameterTypeError(f"df must be a pandas DataFrame, got df of type {type(df).__name__}")
    if column not in df.columns:
        raise ParameterError(
            f"column must be one of the table's columns ({_clip(', '.join(map(str, df.columns)), 200)}), "
            f"got column={column!r}"
        )
    kind = check.one_of(kind, "kind", COLUMN_KINDS)
    s = df[column]
    present = s.notna()
    if kind in ("numeric", "integer"):
        if pd.api.types.is_datetime64_any_dtype(s.dtype):
            raise DataLoadError(f"column {column!r} holds dates, which dpdash does not turn into numbers")
        if pd.api.types.is_bool_dtype(s.dtype) or pd.api.types.is_numeric_dtype(s.dtype):
            converted = s.astype(float)
        else:
            converted = pd.to_numeric(_text_of(s).str.strip(), errors="coerce").astype(float)
        lost = present & converted.isna()
        what = "numbers"
        if kind == "integer":
            fractional = converted.notna() & (converted != np.round(converted))
            lost = lost | fractional
            what = "whole numbers"
            converted = converted.where(~fractional)
            if not converted.isna().any():
                converted = converted.astype(np.int64)
    elif kind == "boolean":
        if pd.api.types.is_bool_dtype(s.dtype):
            converted = s
        else:
            words = _text_of(s).str.strip().str.lower()
            converted = pd.Series(
                np.where(words.isin(_TRUE), True, np.where(words.isin(_FALSE), False, None)),
                index=s.index,
                dtype="boolean",
            )
        lost = present & converted.isna()
        what = "yes/no values (true/false, yes/no, y/n, t/f, 1/0)"
        if not converted.isna().any():
            converted = converted.astype(bool)
    elif kind == "datetime":
        if pd.api.types.is_datetime64_any_dtype(s.dtype):
            converted = s
        elif pd.api.types.is_numeric_dtype(s.dtype) or pd.api.types.is_bool_dtype(s.dtype):
            raise DataLoadError(
                f"column {column!r} holds numbers, which dpdash does not turn into dates: "
                "store the dates as text such as 2024-06-01 in the file"
            )
        else:
            with catch_warnings():
                simplefilter("ignore", UserWarning)  # "could not infer format": the count below says it
                converted = pd.to_datetime(_text_of(s).str.strip(), errors="coerce")
        lost = present & converted.isna()
        what = "dates in one format (such as 2024-06-01)"
    else:
        converted = _text_of(s)
        lost = pd.Series(False, index=s.index)
        what = "text"
    n_lost = int(lost.sum())
    if n_lost and not drop_invalid:
        becomes = "that value becomes" if n_lost == 1 else f"those {n_lost} values become"
        examples = tuple(dict.fromkeys(str(v) for v in s[lost].iloc[:1000]))[:_EXAMPLES]
        raise ColumnConversionError(
            f"column {column!r} cannot become {kind} without losing values: {n_lost} of {int(present.sum())} "
            f"values are not {what} (e.g. {', '.join(repr(e) for e in examples)}). Fix them in the file, "
            f"or convert anyway and {becomes} missing",
            column=str(column),
            kind=kind,
            invalid_count=n_lost,
            examples=examples,
        )
    out = df.copy(deep=False)
    out[column] = converted
    return out
