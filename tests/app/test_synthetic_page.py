"""AppTest of the Synthetic table page (issue 28): an owner previews for free and releases once through the
ledger, with the downloads; the released table is a fresh draw; an analyst sees the cost but no preview."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dpdash.datasets import load_example
from dpdash.ledger import Ledger
from dpdash.report import released_values, stakeholder_report, synthetic_records
from dpdash.synthetic import build_domain, synthesize
from dpdash.workspace import Workspace
from tests.app.test_roles import as_person, served  # noqa: F401  (a fixture)
from ui.report_download import synthetic_kept
from ui.synthetic_card import card_dict, card_markdown
from ui.synthetic_setup import planned_events, synthesizable

REPO = Path(__file__).resolve().parents[2]
APP = REPO / "app.py"
COLUMNS = ["sex", "diabetes", "age"]  # three columns of the example keep the draws to seconds


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("DPDASH_LEDGER", str(tmp_path / "ledger.sqlite"))
    monkeypatch.setenv("DPDASH_WORKSPACE", str(tmp_path / "workspace"))
    at = AppTest.from_file(str(APP), default_timeout=240)
    at.run()
    at.switch_page("pages/data.py").run()
    at.button(key="data_set_budget").click().run()  # the default tier: ε = 1, δ = 1e-5, tightest
    at.button(key="data_set_budget_confirm").click().run()
    at.switch_page("pages/synthetic.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _ledger(tmp_path: Path) -> tuple[Ledger, object]:
    ledger = Ledger(tmp_path / "ledger.sqlite")
    return ledger, ledger.datasets()[0]


def _text(at: AppTest) -> str:
    return "\n".join(m.value for m in [*at.markdown, *at.caption]).replace("\\", "")


def test_the_columns_and_the_planned_cost_come_from_the_declared_facts() -> None:
    example = load_example("patients")
    usable, refused = synthesizable(example.facts, list(example.data.columns))
    assert "person_id" in refused and "id column" in refused["person_id"]
    assert set(usable) == set(example.facts.bounds) | set(example.facts.categories)
    # The cost stated before a release is the events the core's draw records (checked on a seeded draw).
    small = example.data.head(3000)
    for columns in (["sex"], COLUMNS):
        drawn = synthesize(small, example.facts, epsilon=0.5, delta=1e-6, rng=1, columns=columns)
        planned = planned_events(build_domain(example.facts, columns), 0.5, 1e-6)
        assert len(planned) == len(drawn.events)
        np.testing.assert_allclose(sorted(map(_cost, planned)), sorted(map(_cost, drawn.events)), rtol=1e-12)


def _cost(event: object) -> tuple[float, ...]:
    """What an event's privacy loss depends on (its label aside)."""
    names = ("rho", "sigma", "sensitivity", "epsilon")
    return tuple(float(getattr(event, name, None) or 0.0) for name in names)


@pytest.mark.slow
def test_an_owner_previews_for_free_then_releases_once_with_the_downloads(
    app: AppTest, tmp_path: Path
) -> None:
    assert app.title[0].value == "Synthetic table"
    assert "person_id" in _text(app) or any("person_id" in e.proto.label for e in app.expander)
    app.multiselect(key="synthetic_columns").set_value(COLUMNS).run()
    app.select_slider(key="synthetic_epsilon_slider").set_value(0.5).run()
    ledger, ds = _ledger(tmp_path)
    before = ledger.events(ds)
    app.button(key="synthetic_preview_button").click().run()
    assert not app.exception and not app.error, [e.value for e in [*app.exception, *app.error]]
    text = _text(app)
    assert "Simulated preview: not a release" in text and "NOT PRIVATE" in text
    assert "resemble this preview's, not equal it" in text
    assert ledger.events(ds) == before == []  # the preview spent nothing
    previewed = app.session_state["synthetic_previews"]
    (preview, _), = previewed.values()

    app.button(key="synthetic_release_button").click().run()
    confirm = _text(app)
    assert "Confirm the release" in confirm and "cannot be undone" in confirm
    assert "Cost: ε = 0.5, δ = 1e-06" in confirm
    app.button(key="synthetic_release_confirm").click().run()
    assert not app.exception and not app.error, [e.value for e in [*app.exception, *app.error]]
    released, _ = app.session_state["synthetic_last"]
    made = ledger.releases(ds)
    assert len(made) == 1 and made[0].record["kind"] == "synthetic"
    assert (made[0].record["epsilon"], made[0].record["delta"]) == (0.5, 1e-6)
    # Exactly the core's events, once: the ledger's events are the release's, in one release.
    assert [e.to_dict() for e in ledger.events(ds)] == [e.to_dict() for e in released.privacy_events()]
    assert released.release_grade and not preview.release_grade
    assert not released.table.equals(preview.table)  # a fresh draw, never the previewed one

    downloads = {b.proto.label: b for b in app.get("download_button")}
    assert {"CSV", "Parquet", "Data card (Markdown)", "Data card (JSON)"} <= set(downloads)
    # The script and the notebook that draw it again through this ledger, with the commands to run.
    assert {"Python script (dpdash)", "Jupyter notebook"} <= set(downloads)
    run = next(c.value for c in app.code if "reproduce_synthetic.py" in c.value).splitlines()
    assert run[0].endswith("reproduce_synthetic.py TABLE_FILE") and run[1] == run[0] + " --release"
    assert "spending from this ledger" in _text(app) and str(tmp_path / "ledger.sqlite") in _text(app)
    csv = downloads["CSV"].proto
    assert csv.label == "CSV" and pd.read_csv(io.BytesIO(released.to_csv())).shape == released.table.shape
    assert app.checkbox(key="synthetic_card_quality").value is False
    # The card states the guarantee's facts; the preview's quality only when the owner includes it.
    card = card_dict(released)
    assert card["marginals_measured"] == [list(m) for m in released.marginals]
    assert "preview_quality" not in card
    assert "NOT PRIVATE" in card_markdown(released, previewed[next(iter(previewed))][1])
    # The stakeholder report says what was published, its cost, the method and the marginals measured.
    records = ledger.published(ds)
    page = stakeholder_report(ds, ledger.entries(ds), ledger.totals(ds), facts=released.domain.unit,
                              released=released_values(records), synthetic=synthetic_records(records))
    assert "<h2>Synthetic tables</h2>" in page and "synthetic table of" in page.lower()
    assert "ε = 0.5, δ = " in page and "MST" in page
    assert all(" × ".join(m) in page for m in released.marginals if len(m) == 2)
    # Kept for those who may see releases: listed, with its CSV.
    app.run()
    assert any(b.proto.label == "CSV of release 1" for b in app.get("download_button"))
    # The owner's choice for the card is kept beside the CSV: the report draws the quality figures only then.
    kept = Workspace(tmp_path / "workspace")
    identity, fingerprint = released.dataset_identity, card["table_sha256"]
    assert "preview_quality" not in kept.synthetic_card(identity, fingerprint)
    app.checkbox(key="synthetic_card_quality").check().run()
    assert not app.exception, [e.value for e in app.exception]
    assert "NOT PRIVATE" in kept.synthetic_card(identity, fingerprint)["preview_quality"]["label"]
    tables, cards = synthetic_kept(kept, identity, synthetic_records(records))
    page = stakeholder_report(ds, ledger.entries(ds), ledger.totals(ds), facts=released.domain.unit,
                              synthetic=synthetic_records(records), synthetic_tables=tables,
                              synthetic_cards=cards)  # fmt: skip
    assert 'class="chart synthetic-oneway"' in page and 'class="chart synthetic-quality"' in page
    app.checkbox(key="synthetic_card_quality").uncheck().run()
    assert "preview_quality" not in kept.synthetic_card(identity, fingerprint)


@pytest.mark.slow
def test_a_release_that_does_not_fit_is_refused_with_the_usual_message(app: AppTest) -> None:
    app.multiselect(key="synthetic_columns").set_value(["sex"]).run()
    app.select_slider(key="synthetic_epsilon_slider").set_value(10.0).run()
    assert any("does not fit the remaining budget" in e.value for e in app.error)
    assert not [b for b in app.button if b.key == "synthetic_release_button"]


@pytest.mark.slow
def test_an_owner_chooses_aim_and_its_pairs_previews_and_releases(app: AppTest, tmp_path: Path) -> None:
    app.multiselect(key="synthetic_columns").set_value(COLUMNS).run()
    app.select_slider(key="synthetic_epsilon_slider").set_value(0.5).run()
    app.selectbox(key="synthetic_method").set_value("AIM (adaptive, for the pairs you choose)").run()
    assert "Choose at least one pair of columns for AIM" in "\n".join(i.value for i in app.info)
    pairs = app.multiselect(key="synthetic_workload")
    assert pairs.options == ["sex × diabetes", "sex × age", "diabetes × age"]
    pairs.set_value(["diabetes × age"]).run()
    assert not app.exception and not app.error, [e.value for e in [*app.exception, *app.error]]
    text = _text(app)
    assert "AIM at ρ = " in text and "your 1 pair" in text and "until ρ is spent exactly" in text
    app.button(key="synthetic_preview_button").click().run()
    assert not app.exception and not app.error, [e.value for e in [*app.exception, *app.error]]
    (preview, _), = app.session_state["synthetic_previews"].values()
    assert preview.method == "aim" and preview.workload == (("diabetes", "age"),)
    app.button(key="synthetic_release_button").click().run()
    app.button(key="synthetic_release_confirm").click().run()
    assert not app.exception and not app.error, [e.value for e in [*app.exception, *app.error]]
    released, _ = app.session_state["synthetic_last"]
    ledger, ds = _ledger(tmp_path)
    assert [e.to_dict() for e in ledger.events(ds)] == [e.to_dict() for e in released.privacy_events()]
    assert released.method == "aim" and ledger.releases(ds)[0].record["method"] == "aim"
    # The cost stated before the release (its one-way events and one for the rounds) is what it spent.
    from dpdash.accounting import get_accountant

    planned = planned_events(released.domain, 0.5, 1e-6, "aim", (("diabetes", "age"),))
    stated = get_accountant(ds.accountant).epsilon(planned, ds.budget.delta)  # type: ignore[attr-defined]
    assert ledger.spent(ds).epsilon == pytest.approx(stated, rel=1e-9)


def test_an_analyst_sees_the_cost_but_cannot_preview(served: dict[str, object]) -> None:  # noqa: F811
    at = as_person("bob@example.org")
    at.switch_page("pages/synthetic.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    keys = {b.key for b in at.button}
    assert "synthetic_preview_button" not in keys and "synthetic_release_button" not in keys
    text = _text(at)
    assert "it is for the owners of this table" in text and "this release would bring it to" in text
    assert "synthetic_previews" not in at.session_state


def test_a_viewer_does_not_open_the_page(served: dict[str, object]) -> None:  # noqa: F811
    at = as_person("vic@example.org", script=str(REPO / "pages" / "synthetic.py"))
    assert "This page is not for your role" in at.error[0].value


@pytest.mark.browser
@pytest.mark.slow
def test_browser_walk_previews_releases_and_downloads_the_csv(page, fresh_servers) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    (server,) = fresh_servers(1)
    page.set_viewport_size({"width": 1400, "height": 2400})
    page.goto(f"{server.url}/data")
    page.get_by_role("button", name="Set this budget (it cannot be changed later)").click()
    page.get_by_role("button", name="Confirm: set this budget").click()
    expect(page.get_by_text("A budget cannot be changed once set")).to_be_visible(timeout=60_000)
    page.goto(f"{server.url}/synthetic")
    expect(page.get_by_role("heading", name="Synthetic table")).to_be_visible(timeout=60_000)
    # Three of the seven default columns, as the AppTest above: MST on all seven takes most of a minute.
    for name in ("region", "diagnosis", "income", "visits"):
        page.get_by_label(f"Remove {name}", exact=True).click()
        expect(page.get_by_label(f"Remove {name}", exact=True)).to_have_count(0, timeout=60_000)
    page.get_by_role("button", name="Preview", exact=True).click()
    expect(page.get_by_text("Real rows: NOT PRIVATE (data owner only)")).to_be_visible(timeout=120_000)
    page.get_by_role("button", name="Release… (spends budget)").click()
    expect(page.get_by_text("This cannot be undone")).to_be_visible()
    page.get_by_role("button", name="Release now").click()
    expect(page.get_by_text("Released · synthetic table")).to_be_visible(timeout=180_000)
    with page.expect_download() as download:
        page.get_by_role("button", name="CSV", exact=True).click()
    table = pd.read_csv(download.value.path())
    assert len(table) > 0 and sorted(table.columns) == sorted(COLUMNS)  # the chosen ones: no person_id
