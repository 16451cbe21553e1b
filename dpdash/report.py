"""One-page HTML summaries for stakeholders, readable in a minute: what was released (each value with its
± and the confidence of that ±), who is protected (``dpdash.wording``), and how much budget remains under
the accountant in force. The technical details (the exact guarantee, every accountant's total and why the
others are not spent budget, the ledger entries) sit in a ``<details>`` block below.

The stakeholder report also draws each release's values with their ± and the budget spent against what
remains (``dpdash.report_charts``), and prints on one page (``print_zoom``; ``dpdash.report_pdf`` makes
the PDF)."""

from __future__ import annotations

import contextlib
import html
import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from dpdash.accounting import Plan, PrivacyTotal
from dpdash.errors import DPDashError
from dpdash.facts import Facts
from dpdash.identity import short_identity
from dpdash.ledger import Dataset, Entry
from dpdash.ledger.releases import RecordedRelease, group_releases
from dpdash.release import Release
from dpdash.report_charts import MAX_VALUES, budget_chart, figure, release_chart
from dpdash.report_synthetic import synthetic_charts
from dpdash.risk import max_detection_rate, posterior_bound
from dpdash.rounding import published_figures
from dpdash.wording import accuracy_words, guarantee, mechanism_name, percent

__all__ = [
    "MAX_VALUES", "figure", "plan_report", "print_zoom", "released_values", "stakeholder_report",
    "synthetic_records",
]  # fmt: skip

_STYLE = """
body{font-family:system-ui,sans-serif;max-width:900px;margin:2em auto;padding:0 1em;color:#1b1f24;
line-height:1.5}h1{margin-bottom:0}table{border-collapse:collapse;width:100%;margin:.5em 0 1em}
th,td{border-bottom:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}
td.n{text-align:right;white-space:nowrap}.note{color:#4b535c;font-size:.92em}
.box{background:#f3f5f8;padding:.2em 1em;border-radius:6px}
ul.v{margin:0;padding-left:1.1em}details{margin-top:2em}summary{cursor:pointer;font-weight:600}
svg.chart{max-width:100%;height:auto}td.c{min-width:340px}
"""

#: Printed (and in the PDF): one page of A4 or Letter, whichever the printer uses. The technical details
#: stay on screen; colours print as they are on screen.
_PRINT = """
@page{margin:12mm}
@media print{body{max-width:none;margin:0;padding:0;font-size:9.5pt;line-height:1.3;zoom:%s}
h1{font-size:16pt}h2{font-size:12pt;margin:.5em 0 .2em}p{margin:.35em 0}table{margin:.2em 0 .4em}
.box{padding:.1em .7em}details{display:none}tr{break-inside:avoid}
*{-webkit-print-color-adjust:exact;print-color-adjust:exact}}
"""

#: The height of one printed page in CSS pixels (96 per inch) inside 12 mm margins, on the shorter of
#: A4 (297 mm) and Letter (279.4 mm), less a little for rounding.
PRINT_HEIGHT_PX = (279.4 - 24) / 25.4 * 96 - 20


def _number(value: float | None, digits: int = 4) -> str:
    if value is None:
        return "—"
    if math.isinf(value):
        return "∞"
    return f"{value:.{digits}g}"


def print_zoom(values_per_release: Sequence[int], extra: float = 0.0) -> float:
    """The zoom that fits the printed report on one page: an estimate of its printed height (the heading,
    the budget box and the risk paragraph, then each release's row: the taller of its list of values and
    its chart, and ``extra`` pixels of other charts) against ``PRINT_HEIGHT_PX``; 1 when it fits as it is.
    ``render_pdf`` checks the result.

    >>> print_zoom([1, 5]), round(print_zoom([12] * 8), 2)
    (1.0, 0.33)
    """
    rows = sum(max(82 + 18 * min(n, MAX_VALUES), 58 + 17 * min(n, MAX_VALUES + 1))
               for n in values_per_release)  # fmt: skip
    height = 470 + 30 + rows + extra
    return round(min(1.0, PRINT_HEIGHT_PX / height), 3)


def _risk_sentence(epsilon: float, delta: float, *, after: str) -> str:
    """The attacker's view of a total (ε, δ), in words (MATH.md "Risk, for people")."""
    if not math.isfinite(epsilon):
        return "The accountant cannot state a finite total for these releases."
    return (
        f"{after}, someone who was 50% sure that a given person is in the data can be at most "
        f"<b>{float(posterior_bound(0.5, epsilon)):.1%}</b> sure, and someone 10% sure at most "
        f"<b>{float(posterior_bound(0.1, epsilon)):.1%}</b>. The best possible test of whether a person is "
        f"in the data, allowed 1% false alarms, finds at most "
        f"<b>{float(max_detection_rate(0.01, epsilon, delta)):.1%}</b> of the people who are."
        + (
            f" (The two “sure” figures use ε alone, the pure-ε bound; with δ = {_number(delta, 2)} they hold "
            "up to that small extra chance.)"
            if delta > 0
            else ""
        )
    )


def _cost(record: Release | None, group: Sequence[Entry]) -> str:
    """What one release spent: its record's (ε, δ), or its ledger entries' sum (``RecordedRelease``,
    labelled as such)."""
    made = RecordedRelease(0, tuple(group), None)
    epsilon, delta = (made.epsilon, made.delta) if record is None else (record.epsilon, record.delta)
    cost = f"ε = {_number(epsilon)}" + (f", δ = {_number(delta, 2)}" if delta else "")
    return f"{cost} (sum of its {len(group)} ledger entries)" if record is None and made.summed else cost


def _values(release: Release) -> str:
    """The release's values with their ± (at most ``MAX_VALUES``), as shown everywhere
    (``dpdash.rounding.published_figures``), and what the ± means: per value or all at once, its
    confidence, and the ± for all values at once (``dpdash.published``)."""
    accuracy, shown = release.accuracy, published_figures(release)
    items = []
    rows = zip(release.labels, shown.texts, shown.half_width_texts, strict=False)
    for i, (label, value, width) in enumerate(rows):
        if i == MAX_VALUES:
            items.append(f"<li>… and {len(release.values) - MAX_VALUES} more (in the release record)</li>")
            break
        plus_minus = f" ± {width}" if width else ""
        name = f"{html.escape(str(label))}: " if len(release.values) > 1 or label else ""
        items.append(f"<li>{name}<b>{html.escape(value)}{plus_minus}</b></li>")
    means = accuracy_words(accuracy.confidence, accuracy.method, len(release.values), accuracy.scope,
                           shown.joint_half_width)  # fmt: skip
    note = " Shown as the owner's post-processing left them." if shown.owner_precision else ""
    return (
        f"<ul class=v>{''.join(items)}</ul><span class=note>{html.escape(accuracy.column_label)}. "
        f"{html.escape(means)}{html.escape(note)}</span>"
    )


def released_values(published: Mapping[str, Mapping[str, Any]]) -> dict[str, Release]:
    """``Ledger.published`` records as ``Release`` values, by first entry uid. A record this dpdash cannot
    read (a newer release format) is left out: the report then lists that release by its cost."""
    releases = {}
    for uid, record in published.items():
        with contextlib.suppress(DPDashError, TypeError, ValueError, AttributeError):
            releases[uid] = Release.from_dict(record)
    return releases


def synthetic_records(published: Mapping[str, Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """The ``Ledger.published`` records of synthetic tables (``dpdash.synthetic``), by first entry uid."""
    return {uid: record for uid, record in published.items() if record.get("kind") == "synthetic"}


def _synthetic(record: Mapping[str, Any]) -> str:
    """What a synthetic release published, in a sentence: its rows, columns, method, marginals measured."""
    e = html.escape
    columns = ", ".join(str(c.get("name")) for c in record.get("domain", {}).get("columns", []))
    marginals = "; ".join(" × ".join(map(str, m.get("marginal", []))) for m in record.get("measurements", []))
    rows = record.get("rows")
    return (
        f"A synthetic table of {e(f'{rows:,}' if isinstance(rows, int) else str(rows))} rows with the "
        f"columns {e(columns)}, drawn by {e(str(record.get('method', '')).upper())} from noisy marginals "
        f"(discrete Gaussian noise): {e(marginals)}. No row is a real person's. "
        f"<span class=note style=overflow-wrap:anywhere>SHA-256 of its CSV: "
        f"{e(str(record.get('table_fingerprint', '')))}.</span>"
    )


def _synthetic_section(numbers: Sequence[int], charts: Mapping[int, str]) -> str:
    """A short section on the synthetic tables among the releases (none: nothing), with the charts of
    each (``dpdash.report_synthetic``) where its table is kept."""
    if not numbers:
        return ""
    which = ", ".join(str(n) for n in numbers)
    drawn = "".join(f"<h3>Release {n}: the published synthetic table</h3>{charts[n]}" for n in numbers
                    if charts.get(n))  # fmt: skip
    return (
        f"<h2>Synthetic tables</h2><p>Release{'s' * (len(numbers) > 1)} {which} published a synthetic "
        "table: rows drawn from a statistical model fitted to noisy one- and two-column counts (the "
        "marginals measured, listed with each), so every row is made up and no row is a real person's. Its "
        "cost above covers every count measured and every choice of which pair of columns to measure. The "
        "charts below draw the published table itself (its columns' distributions and how its columns go "
        "together), so they reveal nothing the table does not. How closely it follows the real table was "
        "checked by the data owner on a preview; those figures read the real table, and are shown only where "
        "the owner put them in the table's data card, marked NOT PRIVATE.</p>\n" + drawn + "\n"
    )


def stakeholder_report(
    dataset: Dataset,
    entries: Sequence[Entry],
    totals: Mapping[str, PrivacyTotal | None],
    *,
    facts: Facts,
    released: Mapping[str, Release] | None = None,
    synthetic: Mapping[str, Mapping[str, Any]] | None = None,
    synthetic_tables: Mapping[str, bytes] | None = None,
    synthetic_cards: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    """The report as a self-contained HTML page (no scripts, no external resources; every text escaped).

    Args:
        dataset, entries, totals: the ledger's record, its entries and ``Ledger.totals``.
        facts: the unit of privacy the budget protects.
        released: release records by ledger entry uid (``released_values(ledger.published(dataset))``); a
            release not found there is listed by its cost, with a note that its values are in its own
            release record.
        synthetic: synthetic tables' records by ledger entry uid (``synthetic_records``): each is listed
            with what it published (rows, columns, method, marginals measured) and its (ε, δ).
        synthetic_tables: the released CSV of a synthetic table by ledger entry uid, where it is kept
            (``Workspace.synthetic_csv``): its charts are drawn from it when its SHA-256 is the record's.
        synthetic_cards: the kept data card by ledger entry uid (``Workspace.synthetic_card``): the
            preview's quality figures (NOT PRIVATE) are drawn only when the owner included them there.

    "Spent" is the total under the dataset's own accountant at the budget's δ; the risk statement uses
    it: an attacker p sure before is at most e^ε·p/(1 − p + e^ε·p) sure after, and a membership test with
    1% false positives detects at most min(e^ε·0.01 + δ, 1 − e^(−ε)(0.99 − δ)).
    """
    e, released, synthetic = html.escape, released or {}, synthetic or {}
    kept, cards = synthetic_tables or {}, synthetic_cards or {}
    charts: dict[int, str] = {}
    extra = 0.0
    budget, keeper = dataset.budget, dataset.accountant
    total = totals.get(keeper)
    spent = total.epsilon if total is not None else math.inf
    remaining = max(0.0, budget.epsilon - spent)
    groups = group_releases(entries)
    rows: list[str] = []
    counts: list[int] = []
    tables: list[int] = []  # the synthetic tables' numbers
    for number, group in enumerate(groups, start=1):
        record = released.get(group[0].uid)
        table = synthetic.get(group[0].uid)
        if table is not None:
            cost = f"ε = {_number(table.get('epsilon'))}, δ = {_number(table.get('delta'), 2)}"
            when = e(group[0].created_at[:16].replace("T", " "))
            rows.append(f"<tr><td class=n>{number}</td><td>{e(str(table.get('query_name', '')))}<br>"
                        f"<span class=note>{when} UTC · {cost}</span></td><td>{_synthetic(table)}</td>"
                        "<td class=c></td></tr>")  # fmt: skip
            counts.append(1)
            tables.append(number)
            drawn, height = synthetic_charts(table, kept.get(group[0].uid), cards.get(group[0].uid),
                                             f"synthetic-{number}")  # fmt: skip
            charts[number], extra = drawn, extra + height + (30 if drawn else 0)
            continue
        cost = _cost(record, group)
        what = _values(record) if record is not None else (
            "<span class=note>Values not in the ledger (recorded without them: before dpdash kept them, or "
            "imported from an export it could not verify): see that release's own record.</span>"
        )  # fmt: skip
        name = record.query_name if record is not None else group[0].query
        how = mechanism_name(group[0].mechanism)
        chart = release_chart(record, f"release-{number}") if record is not None else ""
        rows.append(f"<tr><td class=n>{number}</td><td>{e(name)}<br><span class=note>{e(how)}"
                    f" · {e(group[0].created_at[:16].replace('T', ' '))} UTC · {cost}</span></td>"
                    f"<td>{what}</td><td class=c>{chart}</td></tr>")  # fmt: skip
        counts.append(len(record.values) if record is not None else 1)
    scope = "this release" if len(groups) == 1 else f"the {len(groups)} releases together"
    words = guarantee(facts, spent, budget.delta, scope=scope,
                      accountant=keeper) if math.isfinite(spent) else None  # fmt: skip
    if not groups:  # nothing released yet: who will be protected, without a factor of e^0
        words = guarantee(facts)
    protected = e(words.plain) if words else "The accountant cannot state a finite total for these releases."
    share = 0.0 if not math.isfinite(spent) else min(1.0, spent / budget.epsilon)
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Privacy report: {e(dataset.name)}</title>
<style>{_STYLE}{_PRINT % print_zoom(counts, extra)}</style></head><body>
<h1>Privacy report: {e(dataset.name)}</h1>
<p class=note>Made by dpdash on {e(generated)}. Every number below was released with random noise added
to protect the people in the data; the true values are never shown. Values are rounded to what their ±
supports, and each ± covers that rounding.</p>
<div class=box>
<p><b>Who is protected.</b> {protected}</p>
<p><b>Budget remaining: ε = {_number(remaining)} of {_number(budget.epsilon)}.</b> Spent so far: ε =
{_number(spent)} ({percent(share)} of the budget), as counted by the <b>{e(keeper)}</b> accountant, the one
this budget is kept by (at δ = {_number(budget.delta, 2)}).</p>
{budget_chart(_number(spent), _number(remaining), _number(budget.epsilon), keeper, _number(budget.delta, 2))}
</div>
<h2>What was released ({len(groups)})</h2>
<table><tr><th>#</th><th>release</th>
<th>released values ± margin of error (what ± means is under each)</th><th>the same, drawn</th></tr>
{"".join(rows)}</table>
{_synthetic_section(tables, charts)}<h2>What this means for a person in the data</h2>
<p>{_risk_sentence(spent, budget.delta, after="After these releases")}</p>
{_technical(dataset, entries, totals, words.technical if words else "", spent)}
</body></html>
"""


def _identity(dataset: Dataset) -> str:
    """The dataset's identity, shortened as everywhere in dpdash (the whole one on hover)."""
    whole, shown = html.escape(dataset.fingerprint), html.escape(short_identity(dataset.fingerprint))
    lead = "Dataset identity (the content identity its budget is kept under)"
    return f'{lead}: <code title="{whole}">{shown}</code>.'


def _sentences(text: str) -> str:
    """A technical paragraph as a list of its sentences (escaped), easier to read than one block."""
    items = [part if part.endswith(".") else f"{part}." for part in text.split(". ") if part]
    return "<ul>" + "".join(f"<li>{html.escape(item)}</li>" for item in items) + "</ul>"


def _technical(
    dataset: Dataset, entries: Sequence[Entry], totals: Mapping[str, PrivacyTotal | None], exact: str,
    spent: float,
) -> str:  # fmt: skip
    """The ``<details>`` block: the exact guarantee, every accountant's total, the ledger entries."""
    e, keeper, budget = html.escape, dataset.accountant, dataset.budget

    def verdict(name: str, total: PrivacyTotal | None) -> str:
        if name == keeper:
            return "in force: this is the budget spent"
        if total is None:
            return "cannot add up one of these releases"
        if total.epsilon > spent:
            return "a looser (larger) bound on the same releases; not spent budget"
        return "a bound at least as tight; not used for this budget"

    accountants = "".join(
        f"<tr><td>{e(name)}</td><td class=n>{_number(t.epsilon if t else None)}</td><td>{verdict(name, t)}"
        "</td></tr>"
        for name, t in totals.items()
    )
    ledger_rows = "".join(
        f"<tr><td>{e(x.created_at[:19].replace('T', ' '))}</td><td>{e(x.query)}</td>"
        f"<td>{e(mechanism_name(x.mechanism))}</td>"
        f"<td class=n>{_number(x.epsilon)}</td><td class=n>{_number(x.delta, 2)}</td></tr>"
        for x in entries
    )
    return f"""<details><summary>Technical details</summary>
{_sentences(exact)}
<h3>The total under each accountant (ε at δ = {_number(budget.delta, 2)})</h3>
<p class=note>Accountants are different ways of adding releases up; each total is a valid upper bound on the
privacy loss of the same releases. The budget is charged only with the total of the accountant chosen when
it was set, <b>{e(keeper)}</b>. A larger total elsewhere (zCDP, for example, converts through a lossy
bound) is a looser statement about the same releases, not budget spent; a smaller one gives no budget
back.</p>
<table><tr><th>accountant</th><th>total ε</th><th>what it is</th></tr>{accountants}</table>
<h3>Ledger entries ({len(entries)})</h3>
<p class=note>A release of several noisy pieces (a mean: a sum and a count) is one entry per piece.
{_identity(dataset)}</p>
<table><tr><th>time (UTC)</th><th>query</th><th>mechanism</th><th>ε</th><th>δ</th></tr>{ledger_rows}</table>
</details>"""


def plan_report(dataset: Dataset, plan: Plan, *, facts: Facts) -> str:
    """A one-page HTML summary of a release plan (nothing released yet): each planned release with its
    ε and ±accuracy, the total after the plan under the dataset's accountant, and the risk at that total."""
    e = html.escape
    budget = dataset.budget
    rows = "".join(
        f"<tr><td>{e(r.query.query)}</td><td>{e(r.query.mechanism)}</td>"
        f"<td>{'yes' if r.locked else ''}</td><td class=n>{_number(r.epsilon)}</td>"
        f"<td class=n>{_number(r.half_width)}</td></tr>"
        for r in plan.releases
    )
    verdict = (
        f"fits: ε = {_number(plan.total)} of {_number(budget.epsilon)} after the plan"
        if plan.fits
        else f"does <b>not</b> fit: over the budget by ε = {_number(plan.over_by)}"
    )
    confidence = plan.releases[0].query.confidence if plan.releases else 0.95
    words = guarantee(facts)
    if math.isfinite(plan.total):
        words = guarantee(facts, plan.total, budget.delta, scope="the planned releases together",
                          accountant=plan.accountant)  # fmt: skip
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Release plan: {e(dataset.name)}</title>
<style>{_STYLE}</style></head><body>
<h1>Release plan: {e(dataset.name)}</h1>
<p class=note>Made by dpdash on {e(generated)}. Nothing in this plan has been released.
{_identity(dataset)}</p>
<div class=box><p><b>Budget:</b> ε = {_number(budget.epsilon)}, δ = {_number(budget.delta, 2)}, kept by the
<b>{e(plan.accountant)}</b> accountant; ε = {_number(plan.spent)} already spent. The plan {verdict}.</p>
<p><b>Who is protected.</b> {e(words.plain)}</p></div>
<h2>Planned releases</h2>
<p class=note>±accuracy: with probability {percent(confidence)}, all answers of a release are within ±a of
the truth (exact for the mechanism's noise).</p>
<table><tr><th>query</th><th>mechanism</th><th>locked</th><th>ε</th><th>±accuracy</th></tr>{rows}</table>
<h2>What this means for a person in the data</h2>
<p>{_risk_sentence(plan.total, budget.delta, after="If the whole plan is released")}</p>
<details><summary>Technical details</summary>{_sentences(words.technical)}</details>
</body></html>
"""
