"""Exports of a release a person may publish: CSV, the JSON record, and a script that reproduces it.

None of them contains a true value. Text cells that a spreadsheet would execute as a formula (starting
with = + - @, or a tab or carriage return) are escaped with a leading apostrophe (OWASP's advice on CSV
injection); numbers are written as numbers.
"""

from __future__ import annotations

import csv
import io
import numbers
import pprint

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


def release_script(release: Release, table_path: str = "YOUR_TABLE.csv") -> str:
    """A Python script that makes the same release with dpdash (same query, mechanism, ε, δ,
    confidence and post-processing) on the same table; its noise is new, drawn by the exact samplers."""
    query = pprint.pformat(release.query, width=100)  # a Python literal: None, True, tuples
    delta = f", delta={release.delta!r}" if release.delta else ""
    budget = f"ε = {release.epsilon:g}" + (f", δ = {release.delta:g}" if release.delta else "")
    steps = list(release.postprocessing)
    return f'''"""Reproduce a dpdash release: {release.query_name} with {release.mechanism}, {budget}.

The table must be the one released from: its fingerprint was {release.dataset_fingerprint}.
Running this spends privacy budget again: it draws new noise (exact samplers, OS randomness).
"""

import pandas as pd

from dpdash import dataset_fingerprint, release
from dpdash.queries import query_from_dict

QUERY = {query}

df = pd.read_csv({table_path!r})
if dataset_fingerprint(df) != {release.dataset_fingerprint!r}:
    print("warning: this is not the table the release was made from")
result = release(
    query_from_dict(QUERY),
    {release.mechanism!r},
    df,
    epsilon={release.epsilon!r}{delta},
    confidence={release.accuracy.confidence!r},
    postprocess={steps!r},
)
for label, value, width in zip(result.labels, result.values, result.accuracy.half_widths):
    print(f"{{label}}: {{value}} ± {{width}}")
print(result.accuracy.definition)
'''
