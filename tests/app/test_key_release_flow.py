"""AppTest: counts per key of a text column whose categories are not declared, released through the ledger,
then its published keys declared as the column's categories (public now) and used by a histogram."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dpdash.accounting import Budget
from dpdash.datasets import PublicFacts
from dpdash.facts import Facts
from dpdash.ledger import Ledger, fingerprint
from dpdash.loading import load_table
from dpdash.workspace import Workspace

APP = str(Path(__file__).resolve().parents[2] / "app.py")
UNIT = Facts(rows_per_person=1)


@pytest.fixture
def towns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """One row per person: three towns of 300–500 people and one town of a single person, undeclared."""
    monkeypatch.setenv("DPDASH_LEDGER", str(tmp_path / "ledger.sqlite"))
    monkeypatch.setenv("DPDASH_WORKSPACE", str(tmp_path / "workspace"))
    rng = np.random.default_rng(28)
    town = ["Oslo"] * 500 + ["Bergen"] * 400 + ["Tromsø"] * 300 + ["Longyearbyen"]
    raw = pd.DataFrame({"town": town, "age": rng.integers(18, 90, len(town))}).to_csv(index=False).encode()
    data = load_table(raw, "towns.csv").data
    identity = fingerprint(data)
    ws = Workspace(tmp_path / "workspace")
    ws.store_upload(identity, filename="towns.csv", name="towns", data=raw)
    ws.update(identity, facts=PublicFacts(bounds={"age": (0, 100)}, unit=UNIT))
    ws.set_active(identity)
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        budget = Budget(epsilon=2.0, delta=1e-5)
        ledger.add_dataset(name="towns", fingerprint=identity, budget=budget, unit=UNIT,
                           columns=list(data.columns), rows=len(data))  # fmt: skip
    return tmp_path, identity


def _release_keys(column: str, *, epsilon: float, delta: float) -> AppTest:
    """The app after a confirmed key-count release of ``column`` on Query & release."""
    app = AppTest.from_file(APP, default_timeout=90)
    app.run()
    app.switch_page("pages/release.py").run()
    app.selectbox(key="release_kind").set_value("Counts per key (keys not public)").run()
    app.selectbox(key="release_counts_per_key_keys_not_public_column").set_value(column).run()
    app.select_slider(key="release_epsilon_slider").set_value(epsilon).run()
    app.select_slider(key="release_delta_keys").set_value(delta).run()
    app.button(key="release_button").click().run()
    app.button(key="release_confirm").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    return app


def test_published_keys_become_the_columns_categories(towns: tuple[Path, str]) -> None:
    tmp_path, identity = towns
    app = _release_keys("town", epsilon=1.0, delta=1e-6)
    # ε = 1, δ = 1e-6: τ = 15, so 300+ people always pass (noise beyond ±280 has chance < e^(−280)) and
    # the lone person's town passes with chance < 1e-6.
    assert sorted(app.dataframe[-1].value["value"]) == ["Bergen", "Oslo", "Tromsø"]
    app.button(key="release_keys_as_categories").click().run()
    assert not app.exception
    stored = Workspace(tmp_path / "workspace").table(identity)
    assert stored is not None and stored.facts.categories == {"town": ("Bergen", "Oslo", "Tromsø")}
    # The declared categories now serve a histogram of the same column (its own ε).
    app.selectbox(key="release_kind").set_value("Histogram").run()
    app.selectbox(key="release_column").set_value("town").run()
    assert not app.exception and not app.error
    shown = [list(d.value.iloc[:, 0].astype(str)) for d in app.dataframe]
    assert ["Bergen", "Oslo", "Tromsø", "(other)"] in shown, shown  # the histogram's preview (with "other")
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        assert ledger.status(identity).entries == 1


def test_a_release_where_no_key_passes_says_so(towns: tuple[Path, str]) -> None:
    """ε = 0.1, δ = 1e-8: τ = 179 while each age has at most 28 people; the chance that any of the 72 ages
    passes is 3.7e-6 (Σ keep_chance), so the release publishes no key, and the page says so in words."""
    app = _release_keys("age", epsilon=0.1, delta=1e-8)
    assert any("No key reached the threshold" in i.value for i in app.info)
    assert not [b for b in app.button if b.key == "release_keys_as_categories"]
