"""``SyntheticRelease``: a synthetic table with everything its ledger entry and data card need.

Its publishable record (``to_dict`` / ``to_json``) holds the method, ε, δ, ρ, the domain, every noisy
marginal measured (its columns, σ, Δ₂ and noisy counts) and every choice made, the privacy events, the
dataset's fingerprint and identity, whether it is release-grade, and the SHA-256 of the table's CSV; never
a true value. The table itself travels beside it (``table``, ``to_csv``, ``to_parquet``).
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from dpdash.accounting.events import PrivacyEvent
from dpdash.synthetic.domain import SyntheticDomain
from dpdash.synthetic.measure import Measurement, Selection

__all__ = ["FORMAT", "SyntheticRelease", "table_fingerprint"]

FORMAT = "dpdash-synthetic-v1"


def table_fingerprint(table: pd.DataFrame) -> str:
    """``"sha256:<hex>"`` of the table's CSV (no index): what a reader of the download can check."""
    return "sha256:" + hashlib.sha256(table.to_csv(index=False).encode()).hexdigest()


@dataclass(frozen=True, slots=True, eq=False)
class SyntheticRelease:
    """A synthetic table released (or previewed) under (ε, δ)-DP, with its measurements and events.

    Attributes:
        table: the synthetic rows (public once released).
        method: ``"mst"`` (or ``"aim"``).
        epsilon, delta: the target; ``rho``: the ρ-zCDP spent (the largest that fits (ε, δ)).
        domain: the cells of every column (from the public facts).
        measurements: the noisy marginals (publishable); ``selections``: the choices of marginals.
        events: the privacy events the ledger composes (``Ledger.spend_release``).
        release_grade: True for a release (exact sampling on OS randomness), False for a seeded preview.
        dataset_fingerprint, dataset_identity: the table it was drawn from, and the budget it spends.
        seconds: owner-only timings (``"marginals"``: the true counts in the engine; ``"total"``).
    """

    table: pd.DataFrame
    method: str
    epsilon: float
    delta: float
    rho: float
    domain: SyntheticDomain
    measurements: tuple[Measurement, ...]
    selections: tuple[Selection, ...]
    events: tuple[PrivacyEvent, ...]
    release_grade: bool
    dataset_fingerprint: str
    dataset_identity: str
    created_at: str
    workload: tuple[tuple[str, ...], ...] = ()
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def query_name(self) -> str:
        return f"synthetic table ({self.method.upper()}) of {', '.join(self.domain.names)}"

    @property
    def mechanism(self) -> str:
        return f"{self.method.upper()} (discrete Gaussian marginals, exponential-mechanism choices)"

    @property
    def query(self) -> dict[str, Any]:
        """What the ledger reads of a release's query: its kind, columns and unit of privacy."""
        return {"type": "synthetic", "columns": list(self.domain.names), "facts": self.domain.unit.to_dict()}

    @property
    def guarantee(self) -> str:
        return (
            f"(ε = {self.epsilon:g}, δ = {self.delta:g})-differential privacy, from ρ = {self.rho:.6g}-zCDP "
            f"(CKS 2020 conversion); {self.domain.unit.describe()}"
        )

    @property
    def marginals(self) -> tuple[tuple[str, ...], ...]:
        """The columns of every measured marginal, one-way first."""
        return tuple(m.clique for m in self.measurements)

    def privacy_events(self) -> list[PrivacyEvent]:
        """The events ``Ledger.spend_release`` records, all in one transaction."""
        return list(self.events)

    def to_dict(self) -> dict[str, Any]:
        """The publishable record: no true value, and the table by its fingerprint only."""
        return {
            "format": FORMAT,
            "kind": "synthetic",
            "query": self.query,
            "query_name": self.query_name,
            "mechanism": self.mechanism,
            "method": self.method,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "rho": self.rho,
            "guarantee": self.guarantee,
            "unit_of_privacy": self.domain.unit.describe(),
            "domain": self.domain.to_dict(),
            "workload": [list(w) for w in self.workload],
            "measurements": [m.to_dict() for m in self.measurements],
            "selections": [s.to_dict() for s in self.selections],
            "events": [e.to_dict() for e in self.events],
            "rows": len(self.table),
            "table_fingerprint": table_fingerprint(self.table),
            "release_grade": self.release_grade,
            "dataset_fingerprint": self.dataset_fingerprint,
            "dataset_identity": self.dataset_identity,
            "created_at": self.created_at,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, allow_nan=False, sort_keys=True)

    def to_csv(self) -> bytes:
        return self.table.to_csv(index=False).encode()

    def to_parquet(self) -> bytes:
        buffer = io.BytesIO()
        self.table.to_parquet(buffer, index=False)
        return buffer.getvalue()
