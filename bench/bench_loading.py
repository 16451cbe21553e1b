"""Benchmark: generating the example table, and loading a 1 000 000-row upload, against bare pandas.

Prints, best of a few runs each:

- ``synthetic_patients()`` (100 000 rows; target < 0.5 s) and at 1 000 000 rows;
- ``load_table`` on the 1 000 000-row patient table written as CSV and as Parquet, next to the bare
  ``pandas.read_csv`` / ``pandas.read_parquet`` of the same bytes, and the ratio (what the checks,
  encoding detection, name handling and type guessing cost on top of parsing);
- the same CSV with text in a numeric column (the slow path: every value of that column is tested);
- ``load_table`` on a 20 000-row Excel workbook (openpyxl is slow: about this size is where Excel
  stops being pleasant; larger tables should come as CSV or Parquet);
- how long refusing a hostile file takes (2 million shared strings in a small .xlsx, a sheet whose
  filled cells span A1:XFD1048576, a Parquet text value that decodes to 1 GB, 100 000 ragged CSV rows),
  as a ratio to loading a normal small file of the same format (the patients' first 1 000 rows).

Run: ``.venv/bin/python bench/bench_loading.py`` (or ``make bench``).
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd

from bench.timing import best_of
from dpdash.datasets import synthetic_patients
from dpdash.loading import load_table

ROWS = 1_000_000
GENERATE_TARGET = 0.5  # seconds for the default 100 000 rows


def main() -> int:
    generate = best_of(synthetic_patients)
    print(
        f"synthetic_patients(100 000 rows): {generate * 1e3:7.1f} ms"
        f"   target < {GENERATE_TARGET * 1e3:.0f} ms"
    )
    big = synthetic_patients(n_rows=ROWS).data
    print(f"synthetic_patients(1 000 000 rows): {best_of(lambda: synthetic_patients(n_rows=ROWS), 1):.2f} s")

    csv_bytes = big.to_csv(index=False).encode()
    buffer = io.BytesIO()
    big.to_parquet(buffer)
    parquet_bytes = buffer.getvalue()
    dirty = big.assign(age=big["age"].astype(str))
    dirty.loc[::1000, "age"] = "unknown"
    dirty_bytes = dirty.to_csv(index=False).encode()

    print(f"\n{'1 000 000 rows':<34} {'size':>8} {'load_table':>11} {'bare pandas':>12} {'ratio':>6}")
    rows = [
        ("CSV", csv_bytes, "p.csv", lambda: pd.read_csv(io.BytesIO(csv_bytes))),
        (
            "CSV, bare parse with pyarrow",
            csv_bytes,
            "p.csv",
            lambda: pd.read_csv(io.BytesIO(csv_bytes), engine="pyarrow"),
        ),
        ("CSV with text in 'age'", dirty_bytes, "d.csv", lambda: pd.read_csv(io.BytesIO(dirty_bytes))),
        ("Parquet", parquet_bytes, "p.parquet", lambda: pd.read_parquet(io.BytesIO(parquet_bytes))),
    ]
    for label, data, name, bare in rows:
        ours = best_of(lambda data=data, name=name: load_table(data, name))
        theirs = best_of(bare)
        print(f"{label:<34} {len(data) / 2**20:6.1f}MB {ours:10.2f}s {theirs:11.2f}s {ours / theirs:6.2f}")

    small = big.iloc[:20_000]
    buffer = io.BytesIO()
    small.to_excel(buffer, index=False)
    xlsx_bytes = buffer.getvalue()
    ours = best_of(lambda: load_table(xlsx_bytes, "p.xlsx"), 1)
    theirs = best_of(lambda: pd.read_excel(io.BytesIO(xlsx_bytes)), 1)
    print(
        f"{'Excel, 20 000 rows':<34} {len(xlsx_bytes) / 2**20:6.1f}MB {ours:10.2f}s {theirs:11.2f}s "
        f"{ours / theirs:6.2f}"
    )
    hostile_refusals(big.iloc[:1000])
    return 0 if generate < GENERATE_TARGET else 1


def hostile_refusals(small: pd.DataFrame) -> None:
    """Refusing each hostile file, against loading a normal 1 000-row file of the same format."""
    import numpy as np
    import pyarrow as pa

    from dpdash.loading import DataLoadError
    from tests.test_loading_limits import GOOD_SHEET, parquet, workbook

    def refuse(data: bytes, name: str) -> None:
        try:
            load_table(data, name)
        except DataLoadError:
            return
        raise AssertionError(f"{name} was not refused")

    normal = {}
    for suffix, write in (("xlsx", small.to_excel), ("pq", small.to_parquet), ("csv", small.to_csv)):
        buffer = io.BytesIO()
        write(buffer, index=False)
        normal[suffix] = buffer.getvalue()
    dictionary = pa.DictionaryArray.from_arrays(pa.array(np.zeros(1000, np.int32)), pa.array(["x" * 10**6]))
    far = '<row r="1"><c r="A1"><v>1</v></c></row><row r="1048576"><c r="XFD1048576"><v>1</v></c></row>'
    hostile = [
        ("xlsx, 2 000 000 shared strings", workbook(GOOD_SHEET, "<si><t>x</t></si>" * 2_000_000), "xlsx"),
        ("xlsx, filled cells A1 and XFD1048576", workbook(far), "xlsx"),
        ("Parquet, 1 MB value × 1 000 rows", parquet(pa.table({"n": dictionary}), store_schema=False), "pq"),
        ("CSV, 100 000 ragged rows", b"a,b,c\n" + b"1,2\n" * 100_000, "csv"),
    ]
    header = f"{'refusing a hostile file':<38} {'size':>8} {'refusal':>9} {'normal 1 000 rows':>18}"
    print(f"\n{header} {'ratio':>6}")
    for label, data, suffix in hostile:
        ours = best_of(lambda data=data, suffix=suffix: refuse(data, f"h.{suffix}"), 1)
        theirs = best_of(lambda suffix=suffix: load_table(normal[suffix], f"n.{suffix}"), 3)
        print(f"{label:<38} {len(data) / 1e3:6.0f}KB {ours:8.2f}s {theirs:17.3f}s {ours / theirs:6.1f}")


if __name__ == "__main__":
    sys.exit(main())
