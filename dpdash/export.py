"""Exports of a release a person may publish: CSV, the JSON record, and a script that reproduces it.

None of them contains a true value. Text cells that a spreadsheet would execute as a formula (starting
with = + - @, or a tab or carriage return) are escaped with a leading apostrophe (OWASP's advice on CSV
injection); numbers are written as numbers.
"""

from __future__ import annotations

import csv
import io
import math
import numbers
import pprint

from dpdash.errors import ParameterTypeError
from dpdash.release import Release

__all__ = ["escape_cell", "release_csv", "release_script"]

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def escape_cell(value: object) -> object:
    """A text cell that starts like a formula gets a leading ``'``; numbers and other text pass."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def release_csv(release: Release) -> str:
    """label, released value, ± half-width (with its confidence): one row per released value."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    confidence = release.accuracy.confidence
    writer.writerow(["label", "released value", f"± half-width at {confidence:g} confidence"])
    widths = release.accuracy.half_widths
    for i, (label, value) in enumerate(zip(release.labels, release.values, strict=False)):
        width = widths[i] if i < len(widths) else ""
        cell = value if isinstance(value, numbers.Number) else escape_cell(str(value))
        writer.writerow([escape_cell(str(label)), cell, width])
    return buffer.getvalue()


class _NonFinite:
    """A non-finite float, written as the call ``float('nan')`` (``nan`` alone is not a Python literal)."""

    __slots__ = ("text",)

    def __init__(self, value: float) -> None:
        self.text = f"float({str(value)!r})"

    def __repr__(self) -> str:
        return self.text


def _inert(value: object, name: str) -> object:
    """``value`` rebuilt from exact builtin types (str, int, float, bool, None, list, dict with str keys),
    whose ``repr`` is a literal that runs nothing; other objects are refused (a subclass could override
    ``__repr__``)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, numbers.Integral):
        return int.__int__(int(value))  # an exact int, whatever the class's __int__ returned
    if isinstance(value, numbers.Real):
        x = float.__float__(float(value))
        return x if math.isfinite(x) else _NonFinite(x)
    if isinstance(value, list | tuple):
        return [_inert(v, name) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {str.__str__(k): _inert(v, name) for k, v in value.items()}
    raise ParameterTypeError(
        f"{name} must hold only strings, numbers, None, lists and dicts with string keys to be written "
        f"into a script, got {value!r} of type {type(value).__name__}"
    )


def _literal(value: object, name: str) -> str:
    """Python source for ``value``: an inert literal (see ``_inert``), laid out by ``pprint``."""
    return pprint.pformat(_inert(value, name), width=100)


def release_script(release: Release, table_path: str = "YOUR_TABLE.csv") -> str:
    """A Python script that makes the same release with dpdash (same query, mechanism, ε, δ,
    confidence and post-processing) on the same table; its noise is new, drawn by the exact samplers.

    Every value taken from the release or the caller (names that hold column names and where-values,
    the table path, the fingerprint, ...) is written as a ``repr`` literal of a builtin type, so no column
    name or value can end a string and run code when the script is run.

    Raises:
        ParameterTypeError: a part of the release that is not plain data (see ``Release.to_dict``).
    """
    budget = f"ε = {release.epsilon:g}" + (f", δ = {release.delta:g}" if release.delta else "")
    described = f"{release.query_name} with {release.mechanism}, {budget}"
    delta = f", delta={_literal(release.delta, 'delta')}" if release.delta else ""
    return f'''"""Reproduce a dpdash release (RELEASE says which) with the same query, mechanism, budget,
confidence and post-processing.

The table must be the one released from: its fingerprint was FINGERPRINT.
Running this spends privacy budget again: it draws new noise (exact samplers, OS randomness).
"""

import pandas as pd

from dpdash import dataset_fingerprint, release
from dpdash.queries import query_from_dict

RELEASE = {_literal(described, "query_name")}
FINGERPRINT = {_literal(release.dataset_fingerprint, "dataset_fingerprint")}
TABLE = {_literal(table_path, "table_path")}
QUERY = {_literal(release.query, "query")}

df = pd.read_csv(TABLE)
if dataset_fingerprint(df) != FINGERPRINT:
    print("warning: this is not the table the release was made from")
result = release(
    query_from_dict(QUERY),
    {_literal(release.mechanism, "mechanism")},
    df,
    epsilon={_literal(release.epsilon, "epsilon")}{delta},
    confidence={_literal(release.accuracy.confidence, "confidence")},
    postprocess={_literal(list(release.postprocessing), "postprocessing")},
)
for label, value, width in zip(result.labels, result.values, result.accuracy.half_widths):
    print(f"{{label}}: {{value}} ± {{width}}")
print(result.accuracy.definition)
'''
