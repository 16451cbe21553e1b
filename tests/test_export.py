"""Exports never carry true values and escape formula-like text; the script releases only through the ledger,
refuses what does not fit, and its preview spends nothing."""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from dpdash.accounting import Budget
from dpdash.errors import ParameterError
from dpdash.export import escape_cell, release_csv, release_script, simulate_release
from dpdash.facts import Bounds
from dpdash.ledger import Ledger, fingerprint
from dpdash.ledger.releases import release_count
from dpdash.loading import coerce_column, load_table
from dpdash.mechanisms import Geometric, KeyThreshold
from dpdash.queries import Histogram, KeyCounts, Mean, Quantile
from dpdash.release import release
from dpdash.table_origin import TableOrigin


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


# ---- the script: a release only through the ledger ----------------------------------------------------

REPO = str(Path(__file__).resolve().parents[1])


@pytest.fixture
def coded_table(tmp_path: Path) -> dict[str, Any]:
    """A CSV whose ``sex`` column is coded 1/2, changed in the app to categorical (as in issue 13: the old
    script read it as integers and counted everyone under "(other)"), a histogram of it released there,
    and a ledger holding the dataset's budget (ε = 12, basic accountant)."""
    rng = np.random.default_rng(13)
    path = tmp_path / "people.csv"
    pd.DataFrame({"sex": rng.choice([1, 2], 600, p=[0.65, 0.35]), "age": rng.integers(18, 90, 600)}).to_csv(
        path, index=False
    )
    raw = load_table(path.read_bytes(), path.name).data
    identity = fingerprint(raw)
    df = coerce_column(raw, "sex", "categorical")
    query = Histogram(column="sex", categories=["1", "2"])
    app_release = release(query, "Geometric", df, epsilon=5.0, identity=identity)  # what the app ran
    ledger_path = tmp_path / "ledger.sqlite"
    with Ledger(ledger_path) as ledger:
        ledger.add_dataset(name="people", fingerprint=identity, budget=Budget(12.0), accountant="basic")
    script = tmp_path / "reproduce_release.py"
    origin = TableOrigin(coercions=[("sex", "categorical")], table_name="people.csv", ledger=ledger_path)
    script.write_text(release_script(app_release, origin=origin))
    return {
        "path": path,
        "identity": identity,
        "release": app_release,
        "ledger": ledger_path,
        "script": script,
    }


def _run(script: Path, *args: str, ledger: Path | None) -> subprocess.CompletedProcess[str]:
    """The script run as a person runs it: this Python, from the script's folder, ``--ledger`` when given;
    $DPDASH_LEDGER names another file, which the script must not read. PYTHONPATH is this checkout only, so
    the script imports the dpdash under test (the one installed may be another checkout's)."""
    env = {**os.environ, "DPDASH_LEDGER": str(script.parent / "not-this-ledger.sqlite"), "PYTHONPATH": REPO}
    ledger_args = ("--ledger", str(ledger)) if ledger is not None else ()
    return subprocess.run(
        [sys.executable, str(script), *args, *ledger_args], capture_output=True, text=True, encoding="utf-8",
        cwd=str(script.parent), env=env, timeout=120,
    )  # fmt: skip


def _spent(ledger_path: Path, identity: str) -> tuple[float, int]:
    with Ledger(ledger_path) as ledger:
        status = ledger.status(identity)
        return status.spent.epsilon, status.entries


def _printed(stdout: str) -> dict[str, int]:
    return {
        line.split(": ")[0]: int(line.split(": ")[1].split(" ± ")[0])
        for line in stdout.splitlines()
        if " ± " in line
    }


def test_the_script_spends_from_the_ledger_and_matches_the_app_after_a_type_change(coded_table) -> None:
    """Run as downloaded: no --ledger, $DPDASH_LEDGER naming another file; it spends from
    the ledger the release was made with, and its first line says the command that runs it."""
    script = coded_table["script"].read_text()
    assert script.splitlines()[0] == "# Run it with: python reproduce_release.py people.csv"
    out = _run(coded_table["script"], str(coded_table["path"]), ledger=None)
    assert out.returncode == 0, out.stderr
    assert not (coded_table["script"].parent / "not-this-ledger.sqlite").exists()
    assert _spent(coded_table["ledger"], coded_table["identity"]) == (5.0, 1)
    printed = _printed(out.stdout)
    assert list(printed) == ["1", "2", "(other)"]
    # ε = 5 geometric noise: |noise| ≥ 6 has probability 2·e^(−30)/(1 + e^(−5)) per cell, far below 1e-12.
    true = dict(zip(coded_table["release"].labels, coded_table["release"].true_values, strict=True))
    assert true["(other)"] == 0 and true["1"] > 300
    assert all(abs(printed[label] - true[label]) <= 5 for label in printed), (printed, true)
    assert "Released: histogram of sex with Geometric, ε = 5" in out.stdout


def test_the_script_refuses_when_its_ledger_is_not_there(coded_table, tmp_path: Path) -> None:
    """A script made with a ledger that is gone names it, and asks for --ledger; nothing is created."""
    gone = tmp_path / "moved" / "ledger.sqlite"
    script = tmp_path / "gone.py"
    origin = TableOrigin(coercions=[("sex", "categorical")], ledger=gone)
    script.write_text(release_script(coded_table["release"], origin=origin, python="/x/py"))
    assert script.read_text().splitlines()[0] == "# Run it with: /x/py reproduce_release.py TABLE_FILE"
    out = _run(script, str(coded_table["path"]), ledger=None)
    assert out.returncode == 1 and f"this release was spent from {gone}" in out.stderr, out.stderr
    assert "--ledger" in out.stderr and not gone.parent.exists()


def test_the_script_takes_the_ledger_from_the_command_line(coded_table) -> None:
    out = _run(
        coded_table["script"], str(coded_table["path"]), "--ledger", str(coded_table["ledger"]), ledger=None
    )
    assert out.returncode == 0, out.stderr
    assert _spent(coded_table["ledger"], coded_table["identity"]) == (5.0, 1)


@pytest.mark.slow
def test_the_script_refuses_when_the_budget_is_short_and_records_nothing(coded_table) -> None:
    for _ in range(2):  # 5 + 5 of 12
        assert (
            _run(coded_table["script"], str(coded_table["path"]), ledger=coded_table["ledger"]).returncode
            == 0
        )
    out = _run(coded_table["script"], str(coded_table["path"]), ledger=coded_table["ledger"])
    assert out.returncode == 1
    assert "Not released, nothing was spent" in out.stderr and "does not fit the budget" in out.stderr
    assert " ± " not in out.stdout and "Released" not in out.stdout
    assert _spent(coded_table["ledger"], coded_table["identity"]) == (10.0, 2)


def test_preview_simulates_and_spends_nothing(coded_table) -> None:
    out = _run(coded_table["script"], str(coded_table["path"]), "--preview", ledger=coded_table["ledger"])
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("SIMULATED PREVIEW: not a release, no budget spent")
    assert "Released" not in out.stdout
    lines = [line for line in out.stdout.splitlines() if " ± " in line]
    assert len(lines) == 3 and all(line.startswith("simulated ") for line in lines)
    assert _spent(coded_table["ledger"], coded_table["identity"]) == (0.0, 0)


@pytest.mark.slow
def test_the_script_refuses_another_table_and_a_missing_budget(coded_table, tmp_path: Path) -> None:
    other = tmp_path / "other.csv"
    other.write_text(coded_table["path"].read_text().replace("\n1,", "\n2,", 1))  # one person changed
    out = _run(coded_table["script"], str(other), ledger=coded_table["ledger"])
    assert out.returncode == 1 and "is not the table this release was made from" in out.stderr
    assert _spent(coded_table["ledger"], coded_table["identity"]) == (0.0, 0)
    missing = tmp_path / "nowhere" / "ledger.sqlite"
    out = _run(coded_table["script"], str(coded_table["path"]), ledger=missing)
    assert out.returncode == 1 and "there is no dpdash ledger" in out.stderr
    assert not missing.parent.exists()  # no empty ledger was created to release against
    with Ledger(tmp_path / "empty.sqlite"):
        pass
    out = _run(coded_table["script"], str(coded_table["path"]), ledger=tmp_path / "empty.sqlite")
    assert out.returncode == 1 and "has no budget for this dataset" in out.stderr


def test_a_mean_through_the_script_is_one_release_of_two_entries(coded_table) -> None:
    raw = load_table(coded_table["path"].read_bytes(), "people.csv").data
    df = coerce_column(raw, "sex", "categorical")
    r = release(
        Mean(column="age", bounds=Bounds(0, 120)), "Laplace", df, epsilon=1.0, identity=fingerprint(raw)
    )
    script = coded_table["script"].with_name("mean.py")
    script.write_text(release_script(r, origin=TableOrigin(coercions=[("sex", "categorical")])))
    out = _run(script, str(coded_table["path"]), ledger=coded_table["ledger"])
    assert out.returncode == 0, out.stderr
    with Ledger(coded_table["ledger"]) as ledger:
        entries = ledger.entries(coded_table["identity"])
    assert len(entries) == 2 and release_count(entries) == 1


@pytest.mark.slow
def test_key_counts_through_the_script_publish_only_keys_above_the_threshold(coded_table) -> None:
    """Keys that are not public (one row per person): the script releases through the ledger with the
    release's δ, and its preview simulates the same threshold."""
    raw = load_table(coded_table["path"].read_bytes(), "people.csv").data
    df = coerce_column(raw, "sex", "categorical")
    r = release(KeyCounts(column="age"), "geometric", df, epsilon=2.0, delta=1e-6, identity=fingerprint(raw))
    script = coded_table["script"].with_name("keys.py")
    script.write_text(release_script(r, origin=TableOrigin(coercions=[("sex", "categorical")])))
    tau = KeyThreshold(epsilon=2.0, delta=1e-6, max_groups=1, max_rows_per_group=1).threshold
    # The fixture's budget has δ = 0: a release with δ > 0 does not fit it, and nothing is recorded.
    refused = _run(script, str(coded_table["path"]), ledger=coded_table["ledger"])
    assert refused.returncode == 1 and "does not fit the budget" in refused.stderr
    ledger_path = coded_table["ledger"].with_name("with-delta.sqlite")
    with Ledger(ledger_path) as ledger:
        ledger.add_dataset(name="people", fingerprint=coded_table["identity"], budget=Budget(12.0, 1e-5),
                           accountant="basic")  # fmt: skip
    for args in (("--preview",), ()):
        out = _run(script, str(coded_table["path"]), *args, ledger=ledger_path)
        assert out.returncode == 0, out.stderr
        printed = _printed(out.stdout)
        assert printed and all(v >= tau for v in printed.values()), out.stdout
    with Ledger(ledger_path) as ledger:
        status = ledger.status(coded_table["identity"])
    assert status.entries == 1 and status.spent.epsilon == pytest.approx(2.0)


# ---- the preview's simulation ------------------------------------------------------------------------


def test_simulated_releases_fall_within_the_stated_half_widths() -> None:
    """Seeded: 400 simulated histograms at ε = 0.5; Pr[all within ±a] ≥ 0.95 is stated for the joint ±, so
    at least 0.95 − 4·sd ≈ 0.906 of them must be (the exact coverage is higher: geometric noise is
    discrete); each value on its own within its per-value ± likewise."""
    df = pd.DataFrame({"c": ["a"] * 50 + ["b"] * 30})
    query = Histogram(column="c", categories=["a", "b"])
    rng = np.random.default_rng(7)
    hits = each = 0
    for _ in range(400):
        s = simulate_release(query, "geometric", df, epsilon=0.5, rng=rng)
        joint = s.accuracy.joint_half_width
        hits += all(abs(v - t) <= joint for v, t in zip(s.values, (50, 30, 0), strict=True))
        each += abs(s.values[0] - 50) <= s.half_widths[0]
    assert hits / 400 >= 0.906 and each / 400 >= 0.906
    assert s.labels == ("a", "b", "(other)")


def test_simulated_means_and_medians_have_the_release_shape() -> None:
    df = pd.DataFrame({"age": np.arange(100) % 90})
    mean = simulate_release(Mean(column="age", bounds=Bounds(0, 90)), "laplace", df, epsilon=1.0, rng=1)
    assert len(mean.values) == len(mean.half_widths) == 1 and mean.accuracy.method == "simulated"
    assert "simulated at the released values" in mean.definition
    median = simulate_release(
        Quantile(column="age", candidates=tuple(range(0, 91, 5))), "exponential", df,
        epsilon=1.0, rng=1,
    )  # fmt: skip
    assert median.values[0] in range(0, 91, 5)
    with pytest.raises(ParameterError, match="delta is required"):
        simulate_release(Mean(column="age", bounds=Bounds(0, 90)), "gaussian", df, epsilon=1.0)
