"""The stakeholder report: what was released (values with ±), who is protected, the budget left under the
accountant in force; technical details folded; every text escaped."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd

from dpdash.accounting import Budget, PlannedQuery, event_for
from dpdash.facts import Facts
from dpdash.ledger import Ledger, fingerprint
from dpdash.mechanisms import Laplace
from dpdash.queries import Count, Histogram
from dpdash.release import release
from dpdash.report import MAX_VALUES, plan_report, released_values, stakeholder_report
from dpdash.risk import posterior_bound
from dpdash.rounding import published_figures
from dpdash.wording import guarantee

HOSTILE = "<img src=x onerror=alert(1)>"


def _flat(page: str) -> str:
    return " ".join(page.split())  # HTML ignores line breaks; so does the check


def _visible(page: str) -> str:
    """The report's text outside the technical <details> block."""
    return _flat(page.split("<details>")[0])


def test_report_states_budget_remaining_and_risk(tmp_path: Path) -> None:
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        ds = ledger.add_dataset(name="<b>patients</b>", fingerprint="sha256:abc", budget=Budget(2.0, 1e-6),
                                accountant="basic")  # fmt: skip
        ledger.spend(ds, event_for(Laplace(epsilon=0.5, sensitivity=1.0), query="count <script>"))
        ledger.spend(ds, event_for(Laplace(epsilon=0.25, sensitivity=1.0), query="mean age"))
        page = stakeholder_report(ds, ledger.entries(ds), ledger.totals(ds), facts=Facts())
    visible = _visible(page)
    assert "&lt;b&gt;patients&lt;/b&gt;" in page and "<script>" not in page and "<b>patients" not in page
    assert "Budget remaining: ε = 1.25 of 2.</b> Spent so far: ε = 0.75 (37.5% of the budget)" in visible
    assert "counted by the <b>basic</b> accountant" in visible
    assert f"{float(posterior_bound(0.5, 0.75)):.1%}" in visible
    assert "use ε alone, the pure-ε bound; with δ = 1e-06 they hold up to that small extra chance" in visible
    assert "What was released (2)" in visible and "mean age" in visible
    # Who is protected: the plain sentence at the total spent, exactly as the wording helper says it.
    plain = guarantee(Facts(), 0.75, 1e-6, scope="the 2 releases together", accountant="basic").plain
    assert plain.replace("'", "&#x27;") in visible
    # Releases recorded without their values (``spend``) are listed by their cost, never with invented ones.
    assert visible.count("Values not in the ledger") == 2


def test_released_values_with_their_half_width_and_confidence(tmp_path: Path) -> None:
    df = pd.DataFrame({"region": ["N", "S", HOSTILE, "N", "S", "N"]})
    query = Histogram(column="region", categories=["N", "S", HOSTILE], facts=Facts(rows_per_person=2))
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        ds = ledger.add_dataset(name="t", fingerprint=fingerprint(df), budget=Budget(1.0, 0.0),
                                accountant="basic")  # fmt: skip
        made = release(query, Laplace, df, epsilon=0.5, confidence=0.9, identity=fingerprint(df))
        ledger.spend_release(ds, made)
        released = released_values(ledger.published(ds))  # as the Budget page reads them, in any session
        page = stakeholder_report(ds, ledger.entries(ds), ledger.totals(ds), facts=query.facts,
                                  released=released)  # fmt: skip
    assert list(released.values()) == [made]
    visible = _visible(page)
    shown = published_figures(made)  # rounded as the CSV and the app show them
    for label, value, width in zip(made.labels, shown.texts, shown.half_width_texts, strict=True):
        escaped = label.replace("<", "&lt;").replace(">", "&gt;")
        assert f"{escaped}: <b>{value} ± {width}</b>" in visible
    assert "<img" not in page
    count = len(made.values)
    assert "± each value (90% confidence)." in visible
    joint = f"{shown.joint_half_width:.4g}"
    assert (
        "With probability at least 90%, each released value is within its ± of its true value; "
        f"all {count} at once are within ± {joint}." in visible
    )
    assert "Protects each person (up to 2 rows each)" in visible
    assert "Budget remaining: ε = 0.5 of 1." in visible and "pure-ε bound" not in visible  # δ = 0


def test_a_long_release_lists_its_first_values_and_says_how_many_more(tmp_path: Path) -> None:
    categories = [f"c{i}" for i in range(MAX_VALUES + 5)]
    df = pd.DataFrame({"x": categories})
    query = Histogram(column="x", categories=categories)
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        ds = ledger.add_dataset(name="t", fingerprint=fingerprint(df), budget=Budget(1.0, 0.0),
                                accountant="basic")  # fmt: skip
        made = release(query, Laplace, df, epsilon=0.5, identity=fingerprint(df))
        entries = ledger.spend_release(ds, made)
        page = stakeholder_report(ds, ledger.entries(ds), ledger.totals(ds), facts=Facts(),
                                  released={e.uid: made for e in entries})  # fmt: skip
    assert f"c{MAX_VALUES - 1}: <b>" in page and f"c{MAX_VALUES}: <b>" not in page
    assert f"… and {len(made.values) - MAX_VALUES} more (in the release record)" in page
    assert len(made.values) > MAX_VALUES


def test_the_accountant_in_force_and_why_the_others_are_not_spent(tmp_path: Path) -> None:
    """One ε = 0.5 release: zCDP's total is above the budget of 1; it is a looser bound, not spending."""
    df = pd.DataFrame({"x": range(10)})
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        ds = ledger.add_dataset(name="t", fingerprint=fingerprint(df), budget=Budget(1.0, 1e-5),
                                accountant="tightest")  # fmt: skip
        made = release(Count(), Laplace, df, epsilon=0.5, identity=fingerprint(df))
        entries = ledger.spend_release(ds, made)
        totals = ledger.totals(ds)
        page = stakeholder_report(ds, ledger.entries(ds), totals, facts=Facts(),
                                  released={e.uid: made for e in entries})  # fmt: skip
    assert totals["zcdp"] is not None and totals["zcdp"].epsilon > 1.0  # the case the issue names
    visible, flat = _visible(page), _flat(page)
    assert "zcdp" not in visible and "every one of them is a valid guarantee" not in flat
    assert "Budget remaining: ε = 0.5 of 1." in visible
    assert "counted by the <b>tightest</b> accountant" in visible
    row = re.search(r"<tr><td>zcdp</td><td class=n>([^<]+)</td><td>([^<]+)</td></tr>", flat)
    assert row is not None and float(row.group(1)) > 1.0
    assert row.group(2) == "a looser (larger) bound on the same releases; not spent budget"
    assert "<tr><td>tightest</td><td class=n>0.5</td><td>in force: this is the budget spent</td></tr>" in flat
    assert "<details><summary>Technical details</summary>" in flat
    assert "Pr[M(x) ∈ S] ≤ e^ε · Pr[M(x′) ∈ S] + δ" in flat


def test_a_report_before_any_release(tmp_path: Path) -> None:
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        ds = ledger.add_dataset(name="t", fingerprint="sha256:x", budget=Budget(1.0, 0.0), accountant="basic")
        page = _visible(stakeholder_report(ds, [], ledger.totals(ds), facts=Facts(rows_per_person=2)))
    assert "What was released (0)" in page and "Budget remaining: ε = 1 of 1." in page
    assert guarantee(Facts(rows_per_person=2)).plain.replace("'", "&#x27;") in page and "e^0" not in page


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
        page = _flat(stakeholder_report(ds, ledger.entries(ds), ledger.totals(ds), facts=Facts()))
    assert "What was released (2)" in page and "Ledger entries (3)" in page
    assert "ε = 0.5 (sum of its 2 ledger entries)" in page


def test_an_infinite_total_is_said_not_hidden(tmp_path: Path) -> None:
    from dpdash.accounting import PrivacyTotal

    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        ds = ledger.add_dataset(name="t", fingerprint="sha256:x", budget=Budget(1.0, 0.0), accountant="basic")
        ledger.spend(ds, event_for(Laplace(epsilon=0.5, sensitivity=1.0), query="count"))
        totals = {"basic": PrivacyTotal(math.inf, 0.0, "basic")}
        page = _visible(stakeholder_report(ds, ledger.entries(ds), totals, facts=Facts()))
    assert "cannot state a finite total" in page and "Budget remaining: ε = 0 of 1." in page


def test_plan_report_says_whether_it_fits(tmp_path: Path) -> None:
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        ds = ledger.add_dataset(
            name="t", fingerprint="sha256:x", budget=Budget(1.0, 1e-6), accountant="basic"
        )
        fits = ledger.plan(ds, [PlannedQuery(mechanism="laplace", sensitivity=1.0, query="count")])
        over = ledger.plan(ds, [PlannedQuery(mechanism="laplace", sensitivity=1.0, epsilon=3.0, query="x")])
    page = _flat(plan_report(ds, fits, facts=Facts(id_column="pid")))
    assert (
        "The plan fits: ε = 1 of 1 after the plan" in page
        and "Nothing in this plan has been released" in page
    )
    assert "Protects each person (one row each, identified by “pid”)" in page
    page = _flat(plan_report(ds, over, facts=Facts()))
    assert "does <b>not</b> fit: over the budget by ε = 2" in page
