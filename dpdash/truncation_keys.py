"""The per-row keys of per-person truncation: a keyed MD5 of the person, the row's values and its
occurrence (the pandas side; ``dpdash.engines.truncation`` writes the same in SQL).

Truncation to c rows per person must keep a *uniform* choice of each person's rows: a person with n rows
keeps each row with probability min(1, c/n), whatever its values (MATH.md, "A person's contribution").
Each row gets the key

    K = the first 12 hex digits of MD5("dpdash-truncation-1" + "|" + e(id) + "|" + e(v₁) + … + "|" + e(v_k)
                                       + "|" + j)

where v₁ … v_k are the values the query reads and j numbers the person's rows that are equal on all of
them (0, 1, …). Equal rows are interchangeable, so which of them gets which j does not change what is kept,
but each gets a key of its own: a person's repeated favourite category is not kept or dropped as a block,
which is what skewed histograms under an earlier rule keyed on the values alone. Each person keeps the c
rows with the smallest keys; ties (equal 48-bit keys) are broken by each column's missing flag and value,
then j. The rule is a fixed function of each person's own rows, so the sensitivities are unchanged.

A value's text e(v), exact and the same in every engine (no formatted float, no engine's own hash):

- missing (None, NULL, NaN), whatever the column's type: ``N``;
- a string: ``S`` and the 32 hex digits of the MD5 of its UTF-8 text;
- an integer (a signed integer column up to 64 bits, or a boolean as 0/1): ``I`` and its decimal digits,
  exact for every 64-bit value (a key computed in doubles, as an earlier rule did, loses ids past 2⁵³);
- any other number v: ``F`` and the decimal digits of ⌊v⌋, ⌊f·2³¹⌋ and ⌊(f·2³¹ − ⌊f·2³¹⌋)·2³¹⌋ with
  f = v − ⌊v⌋, comma-separated (each exact in doubles); ``FL`` when |v| ≥ 2⁶² or v is infinite.

>>> keys, _ = row_keys(pd.Series([7, 7, 7]), [pd.Series(["a", "a", "b"])])
>>> len(set(keys.tolist()))  # two equal rows, two keys
3
>>> text = "dpdash-truncation-1|I7|S" + hashlib.md5(b"a").hexdigest() + "|0"
>>> f"{keys[0]:012x}" == hashlib.md5(text.encode()).hexdigest()[:12]
True
>>> float_text(-2.5)
'F-3,1073741824,0'
"""

from __future__ import annotations

import hashlib
import math
import numbers
from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["KEY", "KEY_DIGITS", "LARGE", "column_text", "float_text", "key_numbers", "occurrence", "row_keys"]

#: The hash's key, the first field of every row's text.
KEY = "dpdash-truncation-1"
#: Hex digits of the row's MD5 that make its key (48 bits).
KEY_DIGITS = 12
#: Past this magnitude a double is not split into an integer part and a fraction.
LARGE = 2.0**62


def _md5(text: str) -> str:
    return hashlib.md5(text.encode("utf-8", "surrogatepass")).hexdigest()


def float_text(v: float) -> str:
    """e(v) of a double (not missing)."""
    if not abs(v) < LARGE:
        return "FL"
    whole = math.floor(v)
    frac = (v - whole) * 2.0**31
    high = math.floor(frac)
    return f"F{whole},{high},{math.floor((frac - high) * 2.0**31)}"


def column_text(series: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(e(v) of each row, the value to break ties by, missing) of one column, as the engines read its
    type: integers and booleans exactly, other numbers as doubles, anything else as text."""
    missing = series.isna().to_numpy()
    kind = series.dtype
    if pd.api.types.is_bool_dtype(kind) or (
        pd.api.types.is_integer_dtype(kind)
        and (not pd.api.types.is_unsigned_integer_dtype(kind) or kind.itemsize < 8)
    ):
        values = series.to_numpy(dtype=np.int64, na_value=0)
        text = np.where(missing, "N", np.char.add("I", values.astype(str)).astype(object))
        return text.astype(object), np.where(missing, 0, values).astype(float), missing
    if pd.api.types.is_numeric_dtype(kind):
        values = series.to_numpy(dtype=float, na_value=np.nan)
    else:
        objects = series.to_numpy(dtype=object)
        present = objects[~missing]
        if not all(isinstance(v, numbers.Real) for v in present):
            strings = np.array(
                ["" if m else str(v) for v, m in zip(objects, missing, strict=True)], dtype=object
            )
            codes, uniques = pd.factorize(strings)  # hash each distinct value once
            table = np.array(["S" + _md5(s) for s in uniques] or [""], dtype=object)
            return np.where(missing, "N", table[codes]).astype(object), strings, missing
        values = np.where(missing, np.nan, objects).astype(float)
    codes, uniques = pd.factorize(values)  # NaN: −1
    table = np.array([float_text(v) for v in uniques] or [""], dtype=object)
    text = np.where(missing, "N", table[codes])
    return text.astype(object), np.where(missing, 0.0, values), missing


def occurrence(groups: Sequence[np.ndarray]) -> np.ndarray:
    """j of each row: 0, 1, … among the rows equal on every array of ``groups`` (in table order)."""
    frame = pd.DataFrame({str(i): g for i, g in enumerate(groups)})
    return frame.groupby(list(frame.columns), sort=False, dropna=False).cumcount().to_numpy(np.int64)


def row_keys(ids: pd.Series, columns: Sequence[pd.Series]) -> tuple[np.ndarray, list[np.ndarray]]:
    """The key K of each row as an integer (the 12 hex digits read in base 16; ids present, columns in
    the query's order), and the arrays that break its ties, in order: each column's missing flag and
    value, then j."""
    person, uniques = pd.factorize(ids)
    id_text, _, _ = column_text(pd.Series(uniques, dtype=ids.dtype))
    id_text = id_text[person]
    texts = [id_text]
    ties: list[np.ndarray] = []
    for series in columns:
        text, value, missing = column_text(series)
        texts.append(text)
        ties.extend([missing.astype(np.int8), value])
    j = occurrence([person, *ties]) if columns else np.zeros(len(ids), dtype=np.int64)
    text = np.full(len(ids), KEY, dtype=object)
    for part in [*texts, j.astype(str).astype(object)]:
        text = text + "|" + part  # object arrays: Python's str + element by element
    return key_numbers(text), [*ties, j]


def key_numbers(texts: Sequence[str]) -> np.ndarray:
    """The first 12 hex digits of each text's MD5 as an integer: its digest's first 6 bytes, big-endian,
    which order as those hex digits do."""
    md5, size = hashlib.md5, KEY_DIGITS // 2
    return np.fromiter(
        (int.from_bytes(md5(t.encode("utf-8", "surrogatepass")).digest()[:size], "big") for t in texts),
        dtype=np.int64,
        count=len(texts),
    )
