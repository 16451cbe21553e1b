"""AppTest of issue 13 items 5, 10 and 12b on the Query & release page: the ε starts at a tenth of what
remains, a release that would leave almost nothing warns first, a just-made release is not repeated
without a confirmation that says so, a mean counts as one release, and the script the page offers
reproduces the page's query (after a type change) only by spending from the same ledger."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import dpdash.export
from dpdash.accounting import Budget
from dpdash.datasets import PublicFacts
from dpdash.facts import Facts
from dpdash.ledger import Ledger, fingerprint
from dpdash.loading import coerce_column, load_table
from dpdash.release import dataset_fingerprint
from tests.app.conftest import example_identity
from ui.state import ActiveTable
from ui.widgets import EPSILON_STOPS, release_epsilon_default

REPO = Path(__file__).resolve().parents[2]
APP = REPO / "app.py"


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("DPDASH_LEDGER", str(tmp_path / "ledger.sqlite"))
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.run()
    return at


def _set_default_budget(app: AppTest) -> None:
    """The Data page's default tier: ε = 1, δ = 1e-5 (tightest accountant)."""
    app.switch_page("pages/data.py").run()
    app.button(key="data_set_budget").click().run()
    app.button(key="data_set_budget_confirm").click().run()
    app.switch_page("pages/release.py").run()
    assert not app.exception


def _labels(app: AppTest) -> list[str]:
    return [b.label for b in app.button]


def test_the_default_epsilon_is_a_readable_tenth_of_what_remains() -> None:
    assert release_epsilon_default(1.0) == 0.1
    assert release_epsilon_default(0.25) == 0.02  # 0.025 rounded down to a slider stop
    assert release_epsilon_default(0.05) == 0.01  # never below the slider's range
    assert release_epsilon_default(2e-5) == 0.01
    assert release_epsilon_default(1000.0) == 10.0  # nor above it
    assert release_epsilon_default(3.0) == 0.3 and release_epsilon_default(None) == 1.0
    for remaining in np.geomspace(0.1, 100, 40):
        chosen = release_epsilon_default(float(remaining))
        assert chosen in EPSILON_STOPS and chosen <= remaining / 10 * (1 + 1e-9)


def test_the_release_page_starts_at_a_tenth_of_the_budget_and_warns_before_spending_it_all(
    app: AppTest,
) -> None:
    _set_default_budget(app)
    assert app.select_slider(key="release_epsilon_slider").value == 0.1  # not the whole budget ε = 1
    assert not [w for w in app.warning if "would leave only" in w.value]
    app.select_slider(key="release_epsilon_slider").set_value(1.0).run()
    # ε = 1 of a budget ε = 1 leaves 2e-05 under the tightest accountant: warned before any click
    warned = [w.value for w in app.warning if "would leave only" in w.value]
    assert len(warned) == 1 and "less than 5%" in warned[0]
    app.button(key="release_button").click().run()
    assert any("(almost nothing)" in m.value for m in app.markdown)  # and again in the confirmation


def test_a_release_just_made_is_not_repeated_without_a_confirmation_that_says_so(
    app: AppTest, tmp_path: Path
) -> None:
    _set_default_budget(app)
    assert _labels(app) == ["Release… (spends budget)"]
    app.button(key="release_button").click().run()
    app.button(key="release_confirm").click().run()
    assert any("Released" in m.value for m in app.markdown)
    # The same query, mechanism and ε: the button says it would repeat the release
    assert "Release again… (spends budget again)" in _labels(app)
    assert "Release now" not in _labels(app) and "Release again now" not in _labels(app)
    app.button(key="release_button").click().run()
    confirm = [m.value for m in app.markdown if "Confirm the release" in m.value]
    assert len(confirm) == 1 and "This repeats the release you just made" in confirm[0]
    assert "costs ε = 0.1 again" in confirm[0]
    assert "Release again now" in _labels(app)
    app.button(key="release_cancel").click().run()
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        assert ledger.status(example_identity()).entries == 1  # nothing repeated
    # Another ε is another release: the ordinary button and confirmation
    app.select_slider(key="release_epsilon_slider").set_value(0.05).run()
    assert "Release… (spends budget)" in _labels(app)
    app.button(key="release_button").click().run()
    assert not any("repeats" in m.value for m in app.markdown)


def test_a_mean_is_one_release_in_the_sidebar_and_on_the_budget_page(app: AppTest, tmp_path: Path) -> None:
    _set_default_budget(app)
    app.selectbox(key="release_kind").set_value("Mean").run()
    app.button(key="release_button").click().run()
    app.button(key="release_confirm").click().run()
    app.selectbox(key="release_kind").set_value("Count").run()
    app.button(key="release_button").click().run()
    app.button(key="release_confirm").click().run()
    assert not app.exception and not app.error
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        assert ledger.status(example_identity()).entries == 3  # sum, count; count
    assert any(c.value.startswith("2 releases;") for c in app.sidebar.caption)
    app.switch_page("pages/budget.py").run()
    assert [m.value for m in app.metric if m.label == "releases"] == ["2"]
    log = next(d.value for d in app.dataframe if "release" in d.value.columns)  # the log of releases
    assert log["release"].tolist() == [1, 1, 2]


def test_the_page_script_reproduces_the_query_after_a_type_change_through_the_ledger(
    app: AppTest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 13's case: a column of codes 1/2 changed to categorical in the app. The old script read it as
    integers and printed 1: -3, 2: -2, (other): 441; this one prints the app's cells, and spends."""
    rng = np.random.default_rng(5)
    csv = tmp_path / "people.csv"
    pd.DataFrame({"sex": rng.choice([1, 2], 441, p=[0.6, 0.4])}).to_csv(csv, index=False)
    raw = load_table(csv.read_bytes(), csv.name).data
    coerced = coerce_column(raw, "sex", "categorical")
    facts = PublicFacts(categories={"sex": ("1", "2")}, unit=Facts())
    table = ActiveTable(
        "people.csv",
        "upload 'people.csv'",
        coerced,
        facts,
        dataset_fingerprint(coerced),
        fingerprint(raw),
        (("sex", "categorical"),),
        False,
    )  # fmt: skip (what the Data page holds after "Apply the types")
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        ledger.add_dataset(
            name="people", fingerprint=fingerprint(raw), budget=Budget(20.0), accountant="basic"
        )
    scripts: list[str] = []

    def keep(*args: Any, **kwargs: Any) -> str:
        scripts.append(original(*args, **kwargs))
        return scripts[-1]

    original = dpdash.export.release_script
    monkeypatch.setattr(dpdash.export, "release_script", keep)
    app.session_state["dpdash_dataset"] = table
    app.switch_page("pages/release.py").run()
    assert app.select_slider(key="release_epsilon_slider").value == 2.0  # a tenth of 20
    app.selectbox(key="release_kind").set_value("Histogram").run()
    app.selectbox(key="release_mechanism").set_value("Geometric").run()
    app.select_slider(key="release_epsilon_slider").set_value(5.0).run()
    app.button(key="release_button").click().run()
    app.button(key="release_confirm").click().run()
    assert not app.exception and not app.error and scripts
    downloads = {b.proto.label for b in app.get("download_button")}
    assert {"Python script (dpdash)", "Jupyter notebook"} <= downloads
    script = tmp_path / "reproduce_release.py"
    script.write_text(scripts[-1], encoding="utf-8")
    out = subprocess.run(
        [sys.executable, str(script), str(csv)], capture_output=True, text=True, encoding="utf-8",
        cwd=str(tmp_path), env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    cells = {line.split(": ")[0]: int(line.split(": ")[1].split(" ± ")[0]) for line in out.stdout.splitlines()
             if " ± " in line}  # fmt: skip
    true = coerced["sex"].value_counts()
    # ε = 5 geometric noise: |noise| ≥ 6 has probability below 1e-12 per cell
    assert list(cells) == ["1", "2", "(other)"]
    assert (
        abs(cells["1"] - true["1"]) <= 5 and abs(cells["2"] - true["2"]) <= 5 and abs(cells["(other)"]) <= 5
    )
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        assert ledger.status(fingerprint(raw)).spent.epsilon == 10.0  # the page's 5, and the script's 5
