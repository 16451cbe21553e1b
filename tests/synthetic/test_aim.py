"""AIM for a workload of column pairs: its events compose to exactly ρ whatever the number of rounds, the
cost stated before a draw equals the draw's in the ledger, the workload's pairs come out close, and a bad
workload is refused with a message."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpdash.accounting import get_accountant
from dpdash.accounting.events import DiscreteGaussianEvent, ZCDPEvent
from dpdash.conversions import zcdp_epsilon
from dpdash.errors import ParameterError
from dpdash.ledger import Budget, Ledger, fingerprint
from dpdash.synthetic import build_domain, rho_for, synthesize, tvd
from dpdash.synthetic.aim import check_workload, planned_events
from tests.synthetic.helpers import facts, table

COLUMNS = ["colour", "shape", "size"]
WORKLOAD = [("colour", "shape"), ("shape", "size")]


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    return table(11, rows=4000)


def _hand_rho(s) -> float:  # type: ignore[no-untyped-def]
    """The zCDP composition of a draw's steps, from what it publishes: Δ₂²/(2σ²) and ε²/8."""
    return math.fsum([*(m.l2_sensitivity**2 / (2 * m.sigma**2) for m in s.measurements),
                      *(sel.epsilon**2 / 8 for sel in s.selections)])  # fmt: skip


def test_every_draw_spends_exactly_rho_whatever_its_rounds(df: pd.DataFrame) -> None:
    rounds = set()
    for epsilon, seed in ((0.3, 1), (1.0, 2), (4.0, 3)):
        s = synthesize(df, facts(), epsilon=epsilon, delta=1e-6, method="aim", workload=WORKLOAD, rng=seed,
                       columns=COLUMNS)  # fmt: skip
        rho = rho_for(epsilon, 1e-6)
        assert _hand_rho(s) == pytest.approx(rho, rel=1e-12) and _hand_rho(s) <= rho * (1 + 1e-12)
        # One choice and one measurement per round, after the three one-way measurements.
        assert len(s.measurements) == 3 + len(s.selections) and len(s.selections) >= 1
        assert all(isinstance(e, DiscreteGaussianEvent) for e in s.events[:3])
        assert get_accountant("zcdp").epsilon(list(s.events), 1e-6) == pytest.approx(epsilon, rel=1e-9)
        rounds.add(len(s.selections))
        # Each choice is among the workload's pairs and their columns, at the exact utility sensitivity:
        # weights |r ∩ W| summed over the workload (colour 1, shape 2, size 1, each pair 3), Δ₁ = 1.
        for sel in s.selections:
            weights = [sum(len(set(r) & set(q)) for q in WORKLOAD) for r in sel.candidates]
            assert set(sel.candidates) <= {("colour",), ("shape",), ("size",), *WORKLOAD}
            assert sel.sensitivity == max(weights)
    assert len(rounds) > 1  # the rounds depend on the budget (and the data), the total does not


@pytest.mark.parametrize("accountant", ["zcdp", "rdp", "tightest"])
def test_the_stated_cost_is_the_ledger_total_of_a_release(tmp_path: Path, df: pd.DataFrame,
                                                          accountant: str) -> None:  # fmt: skip
    ledger = Ledger(tmp_path / "ledger.sqlite")
    ds = ledger.add_dataset(name="t", fingerprint=fingerprint(df), budget=Budget(3.0, 1e-6),
                            accountant=accountant)  # fmt: skip
    s = synthesize(df, facts(), epsilon=1.0, delta=1e-6, method="aim", workload=WORKLOAD, columns=COLUMNS,
                   identity=fingerprint(df))  # fmt: skip
    assert s.release_grade and s.method == "aim" and s.workload == tuple(WORKLOAD)
    planned = planned_events(build_domain(facts(), COLUMNS), rho_for(1.0, 1e-6), 1e-6)
    assert isinstance(planned[-1], ZCDPEvent) and len(planned) == 4
    entries = ledger.spend_release(ds, s)
    assert len(entries) == len(s.events) == 3 + 2 * len(s.selections)
    total = ledger.totals(ds, [accountant])[accountant].epsilon
    assert total == pytest.approx(get_accountant(accountant).epsilon(planned, 1e-6), rel=1e-9)
    if accountant == "zcdp":
        assert total == pytest.approx(zcdp_epsilon(_hand_rho(s), 1e-6), rel=1e-9)
        assert total == pytest.approx(1.0, rel=1e-9)


def test_the_workload_pairs_come_out_close() -> None:
    """20 000 rows at ε = 1: colour × shape (85 % on the diagonal) within TVD 0.05 of the truth, where a
    table with independent columns is about 0.6 away."""
    big = table(5, rows=20_000)
    s = synthesize(big, facts(), epsilon=1.0, delta=1e-6, method="aim", workload=[("colour", "shape")],
                   rng=4, columns=COLUMNS)  # fmt: skip
    domain = s.domain

    def joint(frame: pd.DataFrame) -> np.ndarray:
        a, b = domain.column("colour"), domain.column("shape")
        codes = a.codes(frame["colour"]) * b.size + b.codes(frame["shape"])
        return np.bincount(np.asarray(codes), minlength=a.size * b.size).astype(float)

    truth, synthetic = joint(big), joint(s.table)
    independent = np.outer(truth.reshape(domain.column("colour").size, -1).sum(1),
                           truth.reshape(domain.column("colour").size, -1).sum(0)).ravel()  # fmt: skip
    assert tvd(truth, independent) > 0.5
    assert tvd(truth, synthetic) <= 0.05


@pytest.mark.parametrize(
    ("workload", "message"),
    [
        ([], "needs a workload"),
        ([("colour", "weight")], "not among the synthesized columns"),
        ([("colour", "colour")], "two different columns"),
        ([("colour",)], "pair of columns"),
        ("colour", "list of column pairs"),
    ],
)
def test_a_bad_workload_is_refused_clearly(df: pd.DataFrame, workload: object, message: str) -> None:
    with pytest.raises((ParameterError, TypeError), match=message):
        synthesize(df.iloc[:200], facts(), epsilon=1.0, delta=1e-6, method="aim", workload=workload,  # type: ignore[arg-type]
                   rng=0, columns=COLUMNS)  # fmt: skip


def test_a_workload_whose_model_is_too_large_is_refused() -> None:
    domain = build_domain(facts(), COLUMNS)
    assert check_workload(domain, [("shape", "colour"), ("colour", "shape")]) == (("colour", "shape"),)
    with pytest.raises(ParameterError, match=r"over the limit of 0\.0005 MB"):
        check_workload(domain, WORKLOAD, max_model_size=0.0005)
