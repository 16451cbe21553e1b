"""A dataset's identity: the content fingerprint its privacy budget is kept under.

The budget protects people, so it must follow the table's content, not how it was read: the same rows
give the same identity whatever the order of the rows or the columns, the file's format, or the types
chosen for the columns (1, 1.0 and "1" are the same value here). ``dpdash.release.dataset_fingerprint``
is the other fingerprint: of the exact table a query ran on (types and row order included), which a
release record states.

Definition (version ``dpdash-content-v1``). Every value is either a number or a text. Numbers are the
numeric values, and the texts that read as a finite number (``float(text)``), except integers of 2⁵³ or
more in magnitude, which are written as their decimal text; −0 is 0. Booleans are the texts
``True``/``False``; any other value is its ``str``. Each column (taken in order of its name) becomes, per
row, the index of its value among the column's distinct values sorted, numbers first by value and then
texts by code point (−1 when missing). The rows are sorted by those indices (all columns), and SHA-256
runs over the version, the column names and the row count (each length-prefixed), then per column the
count and float64 bytes of its distinct numbers, the count, lengths and UTF-8 of its distinct texts, and
its indices in that row order.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pandas as pd

from dpdash.errors import ParameterTypeError

__all__ = ["SHORT_DIGITS", "content_fingerprint", "short_identity"]

_VERSION = "dpdash-content-v1"
#: How many hex digits of an identity a person sees where the whole one does not fit.
SHORT_DIGITS = 12
_EXACT = 2.0**53


def _value(value: object) -> float | str:
    """A distinct value as a number or a text (see the module)."""
    if isinstance(value, (bool, np.bool_)):
        return "True" if value else "False"
    if isinstance(value, (int, np.integer)):
        return float(value) if abs(int(value)) < _EXACT else str(int(value))
    if isinstance(value, (float, np.floating)):
        return float(value)
    text = str(value)
    try:
        number = float(text)
    except ValueError:
        return text
    if not math.isfinite(number):
        return text
    if number.is_integer() and abs(number) >= _EXACT:
        try:
            return str(int(text.strip()))  # a large integer literal: exact as text
        except ValueError:
            pass
    return number


def _codes(column: pd.Series) -> tuple[np.ndarray, list[bytes]]:
    """Per row, the index of the value among the column's distinct values sorted (−1 if missing), and the
    bytes of those distinct values."""
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    dtype = column.dtype
    if (pd.api.types.is_float_dtype(dtype) or pd.api.types.is_integer_dtype(dtype)) and not (
        pd.api.types.is_integer_dtype(dtype) and len(uniques) and np.abs(np.asarray(uniques)).max() >= _EXACT
    ):
        numbers = np.asarray(uniques, dtype=float)
        texts = np.empty(0, dtype=object)
        is_number = np.ones(len(numbers), dtype=bool)
    else:
        values = [_value(u) for u in uniques]  # the distinct values only
        is_number = np.array([isinstance(v, float) for v in values], dtype=bool)
        numbers = np.array([v for v in values if isinstance(v, float)], dtype=float)
        texts = np.array([v for v in values if isinstance(v, str)], dtype=object)
    numbers = numbers + 0.0  # −0 is 0
    distinct_numbers, number_rank = np.unique(numbers, return_inverse=True)
    distinct_texts, text_rank = np.unique(texts, return_inverse=True)
    rank = np.empty(len(is_number), dtype=np.int64)
    rank[is_number] = number_rank.reshape(-1)
    rank[~is_number] = len(distinct_numbers) + text_rank.reshape(-1)
    rows = np.where(codes < 0, -1, rank[np.maximum(codes, 0)] if len(rank) else -1).astype(np.int64)
    encoded = [str(t).encode("utf-8", "surrogatepass") for t in distinct_texts]
    lengths = np.fromiter(map(len, encoded), dtype="<u8", count=len(encoded)).tobytes()
    return rows, [
        len(distinct_numbers).to_bytes(8, "little"),
        distinct_numbers.astype("<f8").tobytes(),
        len(encoded).to_bytes(8, "little"),
        lengths,
        b"".join(encoded),
    ]


def content_fingerprint(df: pd.DataFrame) -> str:
    """``"sha256:<hex>"`` of the table's content, independent of row order, column order and column
    types (see the module's definition)."""
    if not isinstance(df, pd.DataFrame):
        raise ParameterTypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    names = sorted(range(df.shape[1]), key=lambda i: (str(df.columns[i]), i))
    columns = [_codes(df.iloc[:, i]) for i in names]
    order = np.lexsort([codes for codes, _ in columns][::-1]) if columns else np.arange(len(df))
    digest = hashlib.sha256()
    for part in [_VERSION, str(len(names)), *(str(df.columns[i]) for i in names), str(len(df))]:
        encoded = part.encode("utf-8", "surrogatepass")
        digest.update(len(encoded).to_bytes(8, "little") + encoded)
    for codes, texts in columns:
        for part in texts:
            digest.update(part)
        digest.update(codes[order].astype("<i8").tobytes())
    return "sha256:" + digest.hexdigest()


def short_identity(identity: str) -> str:
    """The identity as people see it wherever it is shortened (the Data and Datasets pages, the sidebar,
    reports, the ledger's log): the first ``SHORT_DIGITS`` hex digits of its digest, then "…".

    >>> short_identity("sha256:34d819314c2bc031bc25421a9d209006291b59a0fa59e2bd0d2d4283594a78aa")
    '34d819314c2b…'
    """
    digest = str(identity).rsplit(":", 1)[-1]
    return digest if len(digest) <= SHORT_DIGITS else digest[:SHORT_DIGITS] + "…"
