"""The stakeholder report: states the numbers with their definitions, escapes every text."""

from __future__ import annotations

from pathlib import Path

from dpdash.accounting import Budget, Ledger, event_for
from dpdash.mechanisms import Laplace
from dpdash.report import stakeholder_report
from dpdash.risk import posterior_bound


def test_report_states_budget_totals_and_risk(tmp_path: Path) -> None:
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        ds = ledger.add_dataset(name="<b>patients</b>", fingerprint="sha256:abc", budget=Budget(2.0, 1e-6),
                                accountant="basic")  # fmt: skip
        ledger.spend(ds, event_for(Laplace(epsilon=0.5, sensitivity=1.0), query="count <script>"))
        ledger.spend(ds, event_for(Laplace(epsilon=0.25, sensitivity=1.0), query="mean age"))
        page = stakeholder_report(ds, ledger.entries(ds), ledger.totals(ds), unit_of_privacy="one person")
    page = " ".join(page.split())  # HTML ignores line breaks; so does the check
    assert "&lt;b&gt;patients&lt;/b&gt;" in page and "<script>" not in page  # escaped
    assert "ε = 0.75 at δ = 1e-06" in page  # basic: 0.5 + 0.25
    assert "remaining:</b> ε = 1.25" in page
    assert f"{float(posterior_bound(0.5, 0.75)):.1%}" in page
    assert "Releases (2)" in page and "mean age" in page


def test_a_release_of_several_pieces_counts_once(tmp_path: Path) -> None:
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        ds = ledger.add_dataset(
            name="t", fingerprint="sha256:x", budget=Budget(2.0, 1e-6), accountant="basic"
        )
        pieces = [
            event_for(Laplace(epsilon=0.25, sensitivity=1.0), query=f"mean age: {p}")
            for p in ("sum", "count")
        ]
        ledger.spend_many(ds, pieces)  # one release (a mean), two ledger entries
        ledger.spend(ds, event_for(Laplace(epsilon=0.5, sensitivity=1.0), query="count"))
        page = " ".join(
            stakeholder_report(ds, ledger.entries(ds), ledger.totals(ds), unit_of_privacy="x").split()
        )
    assert "Releases (2)" in page and "Recorded as 3 ledger entries" in page


def test_plan_report_says_whether_it_fits(tmp_path: Path) -> None:
    from dpdash.accounting import PlannedQuery
    from dpdash.report import plan_report

    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        ds = ledger.add_dataset(
            name="t", fingerprint="sha256:x", budget=Budget(1.0, 1e-6), accountant="basic"
        )
        fits = ledger.plan(ds, [PlannedQuery(mechanism="laplace", sensitivity=1.0, query="count")])
        over = ledger.plan(ds, [PlannedQuery(mechanism="laplace", sensitivity=1.0, epsilon=3.0, query="x")])
    page = " ".join(plan_report(ds, fits, unit_of_privacy="one row").split())
    assert (
        "The plan fits: ε = 1 of 1 after the plan" in page
        and "Nothing in this plan has been released" in page
    )
    page = " ".join(plan_report(ds, over, unit_of_privacy="one row").split())
    assert "does <b>not</b> fit: over the budget by ε = 2" in page
