"""Exports never carry true values, escape formula-like text, and the script runs."""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

from dpdash.export import escape_cell, release_csv, release_script
from dpdash.mechanisms import Geometric
from dpdash.queries import Histogram
from dpdash.release import release


def _release() -> tuple[pd.DataFrame, object]:
    df = pd.DataFrame({"answer": ["=cmd|'/c calc'!A1", "+1", "yes", "yes", "@SUM(A1)", "-2"]})
    query = Histogram(column="answer", categories=["=cmd|'/c calc'!A1", "+1", "yes", "@SUM(A1)", "-2"])
    return df, release(query, Geometric, df, epsilon=1.0)


def test_escape_cell() -> None:
    assert escape_cell("=1+1") == "'=1+1"
    assert escape_cell("@x") == "'@x" and escape_cell("-x") == "'-x" and escape_cell("+x") == "'+x"
    assert escape_cell("plain") == "plain" and escape_cell(-3) == -3


def test_csv_escapes_labels_and_has_no_true_values() -> None:
    _, r = _release()
    rows = list(csv.reader(io.StringIO(release_csv(r))))
    assert rows[0][0] == "label"
    labels = [row[0] for row in rows[1:]]
    assert all(not label.startswith(("=", "+", "-", "@")) for label in labels)
    assert "'=cmd|'/c calc'!A1" in labels
    assert [int(row[1]) for row in rows[1:]] == list(r.values)  # released, not true, values


def test_script_reproduces_the_release(tmp_path) -> None:
    df, r = _release()
    table = tmp_path / "table.csv"
    df.to_csv(table, index=False)
    script = tmp_path / "reproduce.py"
    script.write_text(release_script(r, str(table)))
    repo = str(Path(__file__).resolve().parents[1])
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=str(tmp_path),
        env={**os.environ, "PYTHONPATH": repo},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "Pr[all 6 released values within ±a" in out.stdout
    assert "warning" not in out.stdout
