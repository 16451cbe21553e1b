"""A synthetic release is spent once, in one ledger transaction with its record; the ledger's totals are
the composition of its measurements and choices, by hand; a preview spends nothing.

The draws at ε = 1 are made once for the module (``released``, ``preview``): the tests only read them and
spend them into ledgers of their own."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from dpdash.accounting import get_accountant
from dpdash.accounting.events import DiscreteGaussianEvent, ZCDPEvent
from dpdash.conversions import zcdp_epsilon
from dpdash.errors import BudgetExceededError, ParameterError
from dpdash.facts import Facts
from dpdash.ledger import Budget, Ledger, fingerprint
from dpdash.synthetic import rho_for, synthesize, table_fingerprint
from tests.synthetic.helpers import ID, facts, table

COLUMNS = ["colour", "shape", "size"]


@pytest.fixture(scope="module")
def df():  # type: ignore[no-untyped-def]
    return table(11, rows=4000)


@pytest.fixture(scope="module")
def released(df):  # type: ignore[no-untyped-def]
    """Two independent release-grade draws at ε = 1, δ = 1e-6 on ``df`` (no unit)."""
    return [synthesize(df, facts(), epsilon=1.0, delta=1e-6, columns=COLUMNS, identity=fingerprint(df))
            for _ in range(2)]  # fmt: skip


@pytest.fixture(scope="module")
def preview(df):  # type: ignore[no-untyped-def]
    """A seeded preview at ε = 1, δ = 1e-6 on ``df``."""
    return synthesize(df, facts(), epsilon=1.0, delta=1e-6, rng=1, columns=COLUMNS, identity=fingerprint(df))


def _ledger(tmp_path: Path, df, accountant: str, epsilon: float = 3.0, unit: Facts | None = None):  # type: ignore[no-untyped-def]
    ledger = Ledger(tmp_path / "ledger.sqlite")
    ds = ledger.add_dataset(name="t", fingerprint=fingerprint(df), budget=Budget(epsilon, 1e-6),
                            accountant=accountant, unit=unit)  # fmt: skip
    return ledger, ds


def test_rho_is_the_largest_that_fits() -> None:
    rho = rho_for(1.0, 1e-6)
    assert zcdp_epsilon(rho, 1e-6) <= 1.0 < zcdp_epsilon(math.nextafter(rho, math.inf) * (1 + 1e-12), 1e-6)


def test_events_compose_to_rho(preview) -> None:  # type: ignore[no-untyped-def]
    s = preview
    hand = math.fsum(m.l2_sensitivity**2 / (2 * m.sigma**2) for m in s.measurements)
    hand += math.fsum(sel.epsilon**2 / 8 for sel in s.selections)
    assert hand == pytest.approx(s.rho, rel=1e-12)
    assert len(s.measurements) == 3 + 2 and len(s.selections) == 2
    assert all(isinstance(e, DiscreteGaussianEvent) for e in s.events[:5])
    assert all(isinstance(e, ZCDPEvent) and e.rho == pytest.approx(sel.epsilon**2 / 8)
               for e, sel in zip(s.events[5:], s.selections, strict=True))  # fmt: skip
    assert get_accountant("zcdp").epsilon(list(s.events), 1e-6) == pytest.approx(1.0, rel=1e-9)


@pytest.mark.parametrize("accountant", ["zcdp", "rdp", "tightest"])
def test_ledger_totals_equal_the_hand_composition(tmp_path: Path, df, released, accountant: str) -> None:  # type: ignore[no-untyped-def]
    ledger, ds = _ledger(tmp_path, df, accountant)
    s = released[0]
    entries = ledger.spend_release(ds, s)
    assert len(entries) == len(s.events) == 7
    hand_rho = math.fsum(m.l2_sensitivity**2 / (2 * m.sigma**2) for m in s.measurements)
    hand_rho += math.fsum(sel.epsilon**2 / 8 for sel in s.selections)
    totals = ledger.totals(ds, ["zcdp", "rdp"])
    assert totals["zcdp"].epsilon == pytest.approx(zcdp_epsilon(hand_rho, 1e-6), rel=1e-9)
    assert totals["zcdp"].epsilon == pytest.approx(1.0, rel=1e-9)
    # RDP: the same ρ on dp_accounting's grid of orders: never below the exact conversion, and close.
    assert 1.0 - 1e-9 <= totals["rdp"].epsilon <= 1.05
    # Published with the entries: the record, never a true value.
    record = ledger.published(ds)[entries[0].uid]
    assert record["kind"] == "synthetic" and record["release_grade"] is True
    assert record["measurements"][0]["noisy_counts"] == list(s.measurements[0].noisy)
    assert not {"true_values", "report", "table", "quality"} & set(record)
    assert record["table_fingerprint"] == table_fingerprint(s.table) and record["rows"] == len(s.table)
    assert json.loads(s.to_json()) == record


def test_a_release_that_does_not_fit_is_refused_and_nothing_recorded(tmp_path: Path, df, released) -> None:  # type: ignore[no-untyped-def]
    ledger, ds = _ledger(tmp_path, df, "zcdp", epsilon=1.2)  # two at ε = 1 compose to ≈ 1.46
    first, second = released
    ledger.spend_release(ds, first)
    before = len(ledger.entries(ds))
    with pytest.raises(BudgetExceededError, match="does not fit the budget"):
        ledger.spend_release(ds, second)
    assert len(ledger.entries(ds)) == before


def test_a_preview_spends_nothing_and_cannot_be_recorded(tmp_path: Path, df, preview) -> None:  # type: ignore[no-untyped-def]
    ledger, ds = _ledger(tmp_path, df, "zcdp")
    assert preview.release_grade is False and ledger.entries(ds) == []
    with pytest.raises(ParameterError, match="preview"):
        ledger.spend_release(ds, preview)
    assert ledger.entries(ds) == []


def test_the_recorded_unit_must_match(tmp_path: Path, df, released) -> None:  # type: ignore[no-untyped-def]
    from dpdash.errors import DPDashError

    unit = Facts(rows_per_person=2, id_column=ID)
    ledger, ds = _ledger(tmp_path, df, "zcdp", unit=unit)
    with pytest.raises(DPDashError, match="unit"):  # drawn under the default unit (one row per person)
        ledger.spend_release(ds, released[0])
    assert ledger.entries(ds) == []
    same = synthesize(df, facts(unit), epsilon=0.5, delta=1e-6, columns=COLUMNS, identity=fingerprint(df))
    ledger.spend_release(ds, same)
    # c = 2 rows per person: a person changes up to 2 cells, Δ₂ = 2: ρ-zCDP events of Δ₂²/(2σ²).
    assert all(isinstance(e, ZCDPEvent) for e in ledger.events(ds))
    assert ledger.spent(ds).epsilon == pytest.approx(0.5, rel=1e-9)


def test_the_pld_accountant_refuses_like_any_zcdp_event(tmp_path: Path, df, released) -> None:  # type: ignore[no-untyped-def]
    from dpdash.errors import UnsupportedEventError

    ledger, ds = _ledger(tmp_path, df, "pld")
    with pytest.raises(UnsupportedEventError):
        ledger.spend_release(ds, released[0])
    assert ledger.entries(ds) == []


def test_the_ledger_lists_it_as_one_release_and_the_report_renders(tmp_path: Path, df, released) -> None:  # type: ignore[no-untyped-def]
    from dpdash.report import released_values, stakeholder_report

    ledger, ds = _ledger(tmp_path, df, "tightest")
    s = released[0]
    ledger.spend_release(ds, s)
    (listed,) = ledger.releases(ds)
    assert len(listed.entries) == 7 and listed.record["query_name"] == s.query_name
    assert ledger.spent(ds).epsilon == pytest.approx(1.0, rel=1e-9)  # tightest: the zCDP total
    page = stakeholder_report(ds, ledger.entries(ds), ledger.totals(ds), facts=Facts(),
                              released=released_values(ledger.published(ds)))  # fmt: skip
    assert "synthetic: marginal colour" in page
