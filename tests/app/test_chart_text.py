"""AppTest of issue 14's charts on the pages: every chart without Plotly's toolbar and with its table,
the accountant in force on the Budget page, plain counts and n/a reasons in the Mechanism explorer,
merged labels and δ = 0 on the ε page, and the Query & release preview's digits and keyboard controls."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dpdash.accounting import Budget, event_for
from dpdash.datasets import PublicFacts
from dpdash.facts import Facts
from dpdash.ledger import Ledger, fingerprint
from dpdash.mechanisms import Laplace
from dpdash.release import dataset_fingerprint
from tests.app.conftest import example_identity
from ui.numbers import percent

ROOT = Path(__file__).resolve().parents[2]


def _charts(at: AppTest) -> list[dict[str, Any]]:
    """Every chart on the page: its figure (``spec``) and Plotly config."""
    return [
        {"spec": json.loads(c.proto.spec), "config": json.loads(c.proto.config)}
        for c in at.get("plotly_chart")
    ]


def _values(array: Any) -> list[float]:
    """A figure's array from its JSON: a list, or Plotly's typed array (base64 ``bdata``)."""
    if isinstance(array, dict):
        return np.frombuffer(base64.b64decode(array["bdata"]), dtype=array["dtype"]).tolist()
    return list(array)


def _assert_every_chart_has_its_table(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    charts = _charts(at)
    assert charts
    assert all(c["config"] == {"displayModeBar": False} for c in charts)  # no toolbar tab stops
    tables = [h.value for h in at.get("html") if 'class="dataframe dpdash-numbers"' in h.value]
    assert len(tables) == len(charts)  # one table of numbers per chart
    assert all("<th>" in t and "<td>" in t for t in tables)
    labels = [e.label for e in at.expander if e.label.startswith("Chart as a table")]
    assert len(labels) >= len(charts) - 1  # the Alice chart sits in an expander already: its table follows it


def _with_one_release(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The example table with a budget (ε = 1, δ = 1e-5, tightest) and one Laplace ε = 0.5 release."""
    path = tmp_path / "ledger.sqlite"
    monkeypatch.setenv("DPDASH_LEDGER", str(path))
    with Ledger(path) as ledger:
        ds = ledger.add_dataset(
            name="patients", fingerprint=example_identity(), budget=Budget(1.0, 1e-5)
        )
        ledger.spend(ds, event_for(Laplace(epsilon=0.5, sensitivity=1), query="count"))


def _page(name: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page(f"pages/{name}.py").run()
    return at


def test_budget_page_shows_the_accountant_in_force(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _with_one_release(tmp_path, monkeypatch)
    at = _page("budget")
    _assert_every_chart_has_its_table(at)
    totals = at.dataframe[0].value.set_index("accountant")
    assert totals.loc["zcdp", "total ε"] > 1.0  # above the budget line …
    assert (
        totals.loc["zcdp", "what it means"] == "another valid bound, looser: not budget spent"
    )  # … and says why
    assert totals.loc["tightest", "what it means"].startswith("in force")
    assert any("Only the **tightest** accountant's total is budget spent" in m.value for m in at.markdown)
    steps = next(c["spec"] for c in _charts(at) if "Total ε after each release" in str(c["spec"]))
    assert steps["layout"]["xaxis"]["dtick"] == 1 and steps["layout"]["xaxis"]["tickformat"] == ",d"
    solid = [t["name"] for t in steps["data"] if t["line"]["dash"] == "solid"]
    assert solid == ["tightest: in force: every spend is checked against it"]


def test_explorer_counts_and_not_applicable_rows() -> None:
    at = AppTest.from_file(str(ROOT / "pages" / "explorer.py"), default_timeout=90).run()
    _assert_every_chart_has_its_table(at)
    shown = at.dataframe[0].value
    words = " ".join([*shown.columns, *(m.value for m in at.markdown), *(e.label for e in at.expander)])
    assert not re.search(r"\b1 answers\b", words), words
    classic = shown[shown["mechanism"] == "Gaussian (classic)"].iloc[0]
    assert "None" not in classic.astype(str).tolist() and "nan" not in classic.astype(str).tolist()
    assert classic["SD"] == "n/a" and "ε < 1" in classic["why n/a"]
    inverse = at.dataframe[1].value
    assert "None" not in inverse.astype(str).to_numpy().ravel().tolist()


def test_risk_page_labels_and_delta(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _with_one_release(tmp_path, monkeypatch)
    at = _page("risk")
    _assert_every_chart_has_its_table(at)
    posterior = next(c["spec"] for c in _charts(at) if "attacker become" in str(c["spec"]))
    labels = [(t["x"][0], t["text"][0]) for t in posterior["data"] if t.get("text")]
    assert len({round(x, 3) for x, _ in labels}) == len(
        labels
    )  # one label per place: none printed over another
    assert any("release 1" in text and "total (tightest)" in text for _, text in labels)
    reference = next(d.value for d in at.dataframe if "reference" in d.value.columns).set_index("reference")
    assert reference.loc["Apple emoji usage (local model)", "δ"] == "0"
    assert "0e+0" not in reference["δ"].tolist()


@pytest.fixture
def release(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    """The Query & release page on a table of 100 000 rows with a budget ε = 5."""
    from ui.state import ActiveTable

    monkeypatch.setenv("DPDASH_LEDGER", str(tmp_path / "ledger.sqlite"))
    data = pd.DataFrame({"age": [20.0, 40.0, 60.0, 80.0] * 25_000})
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        ledger.add_dataset(name="big", fingerprint=fingerprint(data), budget=Budget(5.0, 1e-6))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    facts = PublicFacts(bounds={"age": (0, 100)}, categories={}, unit=Facts())
    at.session_state["dpdash_dataset"] = ActiveTable(
        "big.csv", "upload 'big.csv'", data, facts, dataset_fingerprint(data), fingerprint(data)
    )
    at.switch_page("pages/release.py").run()
    at.selectbox(key="release_kind").set_value("Count").run()
    return at


def test_a_count_of_100000_keeps_its_relative_error_digits(release: AppTest) -> None:
    _assert_every_chart_has_its_table(release)
    metrics = {m.label: m.value for m in release.metric}
    half_width = float(metrics["± each value (95%)"])
    assert metrics["relative error"] == percent(half_width / 100_000)
    assert metrics["relative error"] not in ("0.0%", "0 %") and metrics["relative error"].startswith("0.00")


def test_possible_releases_step_by_keyboard_controls(release: AppTest) -> None:
    specs = [c["spec"] for c in _charts(release)]
    assert not any(s["layout"].get("updatemenus") or s.get("frames") for s in specs)  # no SVG buttons
    (slider,) = [s for s in release.slider if s.key.endswith("_possible_release")]
    assert slider.label == "Possible release shown" and (slider.min, slider.max) == (1, 30)
    assert next(t for t in release.toggle if t.key.endswith("_possible_play")).value is False

    def shown() -> dict[str, Any]:
        return next(
            s for s in (c["spec"] for c in _charts(release)) if "Possible release " in str(s["layout"])
        )

    first = shown()
    assert "Possible release 1 of 30" in first["layout"]["title"]["text"]
    bar, truth = first["data"][:2]
    assert (
        _values(bar["base"])[0] == _values(truth["y"])[0] == 100_000
    )  # the bar starts at the true value on the zoomed axis
    slider.set_value(7).run()
    assert not release.exception
    assert "Possible release 7 of 30" in shown()["layout"]["title"]["text"]


def test_play_steps_to_the_next_possible_release_and_stop_keeps_it(release: AppTest) -> None:
    play = next(t for t in release.toggle if t.key.endswith("_possible_play"))
    play.set_value(True).run()
    assert not release.exception, [e.value for e in release.exception]
    slider = next(s for s in release.slider if s.key.endswith("_possible_release"))
    assert slider.value == 2  # each run while playing shows the next one
    next(t for t in release.toggle if t.key.endswith("_possible_play")).set_value(False).run()
    assert next(s for s in release.slider if s.key.endswith("_possible_release")).value == 2
