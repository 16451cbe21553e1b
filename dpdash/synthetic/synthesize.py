"""``synthesize(data, facts, epsilon=, delta=)``: a private synthetic table, shaped like ``release()``.

A preview (``rng`` given: a seed or a numpy Generator) runs the same steps with numpy's fast seeded
samplers and is labelled not release-grade: show it to the data owner only, spend nothing. A release
(``rng=None``) draws every noise and every choice with dpdash's exact samplers on OS randomness; record it
with ``Ledger.spend_release(dataset, synthetic)`` before handing out the table.

>>> import pandas as pd
>>> from dpdash.datasets import PublicFacts
>>> df = pd.DataFrame({"sex": ["F", "M"] * 200, "age": list(range(20, 60)) * 10})
>>> facts = PublicFacts(bounds={"age": (0, 100)}, categories={"sex": ["F", "M"]})
>>> s = synthesize(df, facts, epsilon=1.0, delta=1e-6, rng=0)  # a preview
>>> list(s.table.columns), s.release_grade, s.marginals
(['sex', 'age'], False, (('sex',), ('age',), ('sex', 'age')))
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd

from dpdash import _validation as check
from dpdash.datasets import PublicFacts
from dpdash.engines.sources import Source
from dpdash.errors import ParameterError, ParameterTypeError
from dpdash.synthetic.aim import AIMResult, aim, check_workload
from dpdash.synthetic.domain import DEFAULT_BINS, SyntheticDomain, build_domain
from dpdash.synthetic.measure import rho_for, true_counts
from dpdash.synthetic.model import sample_codes, sample_tree
from dpdash.synthetic.mst import MSTResult, mst
from dpdash.synthetic.record import SyntheticRelease

__all__ = ["METHODS", "PREVIEW_SEED", "synthesize"]

METHODS = ("mst", "aim")
#: The seed of the owner's previews (the app's and a downloaded script's): the same choices on the same
#: table give the same preview. A release takes no seed: it draws anew on OS randomness.
PREVIEW_SEED = 20_240_601


def synthesize(
    data: pd.DataFrame | Source,
    facts: PublicFacts,
    *,
    epsilon: float,
    delta: float,
    method: str = "mst",
    workload: Sequence[Sequence[str]] = (),
    rows: int | None = None,
    rng: np.random.Generator | int | None = None,
    identity: str | None = None,
    columns: Sequence[str] | None = None,
    bins: Any = DEFAULT_BINS,
) -> SyntheticRelease:
    """A synthetic table whose one- and two-way marginals follow the table's, under (ε, δ)-DP.

    Args:
        data: a DataFrame, or a ``dpdash.engines.Source`` (Parquet, DuckDB, PostgreSQL, Spark), where
            every marginal is a group-by run in its engine (with the per-person truncation of every release).
        facts: the declared public facts: each column's bounds or categories, the unit of privacy.
        epsilon, delta: the target (ε, δ); the release is ρ-zCDP for the largest ρ that fits
            (``rho_for``), and its events compose to that ρ under the zCDP accountant.
        method: ``"mst"`` (McKenna et al. 2021) or ``"aim"`` (McKenna et al. 2022, for ``workload``).
        workload: the column pairs the owner cares about, for ``"aim"`` (at least one; MST takes none).
        rows: how many rows to draw; default the model's noisy total (the noisy count of rows).
        rng: a seed or numpy Generator for a preview (fast, seeded, not release-grade); None for a release.
        identity: the dataset identity the budget is kept under (as ``release()``); computed when None.
        columns: the columns to synthesize; default every column but the id column.
        bins: equal-width bins per numeric column over its declared bounds, or column → bins / ``Bins``.

    Raises:
        ParameterError: bad parameters, a column without declared facts, an unknown method, a table with
            no rows, a bad workload (``dpdash.synthetic.aim.check_workload``).
        ParameterTypeError: arguments of the wrong type.
    """
    started = time.perf_counter()
    epsilon = check.epsilon(epsilon)
    delta = check.open_unit(delta, "delta")
    method = check.one_of(method, "method", METHODS)
    pairs = _workload(workload)
    if method == "mst" and pairs:
        raise ParameterError(
            "workload is for method='aim'; MST chooses its pairs itself: leave workload empty"
        )
    generator = _generator(rng)
    if not isinstance(data, pd.DataFrame | Source):
        raise ParameterTypeError(f"data must be a pandas DataFrame or a Source, got {type(data).__name__}")
    available = tuple(data.columns)
    if columns is None:
        columns = [str(c) for c in available if c != facts.id_column]
    domain = build_domain(facts, list(columns), bins=bins)
    missing = [c for c in domain.names if c not in available]
    if missing:
        raise ParameterError(f"the columns {missing} are not in the table; its columns: {list(available)}")
    if rows is not None:
        rows = check.positive_int(rows, "rows")
    if method == "aim":
        pairs = check_workload(domain, pairs)
    fingerprint, identity = _identity(data, identity)

    counter = _Counter(domain, data)
    rho = rho_for(epsilon, delta)
    result: MSTResult | AIMResult
    if method == "aim":
        result = aim(domain, counter, rho, pairs, generator)
    else:
        result = mst(domain, counter, rho, generator)
    if isinstance(data, Source):
        data.check_unchanged()
    drawn = rows if rows is not None else max(1, round(result.fit.total))
    edges = [s.candidates[s.chosen] for s in result.selections]
    if isinstance(result, MSTResult) and edges:
        codes = sample_tree(result.fit, edges, drawn, generator)
    else:
        codes = sample_codes(result.fit, drawn, generator)
    values = generator if generator is not None else np.random.default_rng()
    expand = result.compression.expand if isinstance(result, MSTResult) else (lambda _, x, __: x)
    table = pd.DataFrame({
        c.name: c.values(expand(c.name, codes[c.name], values), values).to_numpy() for c in domain.columns
    })  # fmt: skip
    events = [e for m in result.measurements for e in m.events(delta)]
    events += [e for s in result.selections for e in s.events()]
    return SyntheticRelease(
        table=table, method=method, epsilon=epsilon, delta=delta, rho=rho, domain=domain,
        measurements=result.measurements, selections=result.selections, events=tuple(events),
        release_grade=generator is None, dataset_fingerprint=fingerprint, dataset_identity=identity,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"), workload=pairs,
        seconds={"marginals": counter.seconds, "total": time.perf_counter() - started},
    )  # fmt: skip


class _Counter:
    """True counts of marginals in the table's engine, each computed once. NOT PRIVATE."""

    def __init__(self, domain: SyntheticDomain, data: pd.DataFrame | Source) -> None:
        self.domain, self.data, self.seconds = domain, data, 0.0
        self._done: dict[tuple[str, ...], np.ndarray] = {}

    def __call__(self, clique: tuple[str, ...]) -> np.ndarray:
        if clique not in self._done:
            start = time.perf_counter()
            self._done[clique] = true_counts(self.domain, clique, self.data)
            self.seconds += time.perf_counter() - start
        return self._done[clique]


def _generator(rng: object) -> np.random.Generator | None:
    if rng is None:
        return None
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, int) and not isinstance(rng, bool):
        return np.random.default_rng(rng)
    raise ParameterTypeError(f"rng must be None (a release), a seed or a numpy Generator, got rng={rng!r}")


def _workload(workload: object) -> tuple[tuple[str, ...], ...]:
    if isinstance(workload, str) or not isinstance(workload, Sequence):
        raise ParameterTypeError(f"workload must be a list of column pairs, got workload={workload!r}")
    out = []
    for pair in workload:
        if isinstance(pair, str) or not isinstance(pair, Sequence) or len(pair) != 2:
            raise ParameterError(f"each workload entry must be a pair of columns, got {pair!r}")
        out.append((str(pair[0]), str(pair[1])))
    return tuple(out)


def _identity(data: pd.DataFrame | Source, identity: str | None) -> tuple[str, str]:
    """(the exact table's fingerprint, the budget's identity), as ``release()`` states them."""
    from dpdash.release_record import dataset_fingerprint

    if identity is not None and (not isinstance(identity, str) or not identity):
        raise ParameterTypeError(f"identity must be a fingerprint string, got {identity!r}")
    if isinstance(data, Source):
        data.check_unchanged()
        fingerprint = data.fingerprint()
        return fingerprint, identity or fingerprint
    if len(data) == 0:
        raise ParameterError("the table is empty (0 rows): there is nothing to synthesize")
    if identity is None:
        from dpdash.identity import content_fingerprint

        identity = content_fingerprint(data)
    return dataset_fingerprint(data), identity
