"""Making a release again, from its record, only through the ledger: what the downloaded script and the
downloaded notebook both run (``dpdash.export.release_script``, ``dpdash.notebook.release_notebook``).

A :class:`Reproduction` holds what the release states (the query with its public facts, the mechanism, ε,
δ, confidence, post-processing), the table's identity and the app's type changes; a
:class:`SyntheticReproduction` the same for a synthetic table (its columns, declared facts, bins, method,
ε, δ and row count; ``dpdash.synthetic_export``). ``load`` reads the
table's file as the app reads it and refuses any other table; ``preview`` simulates (numpy draws, not a
release, nothing spent); ``spend`` releases with new noise and records it in the ledger the release was
spent from, all or nothing, before anything is printed. What cannot be done raises :class:`Refused`, whose
message says why and that nothing was spent.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from dpdash.errors import BudgetExceededError, DPDashError
from dpdash.export import SimulatedRelease, simulate_release
from dpdash.ledger import BudgetStatus, Dataset, Ledger, fingerprint
from dpdash.loading import coerce_column, load_table
from dpdash.queries import query_from_dict
from dpdash.release import Release, dataset_fingerprint, release
from dpdash.rounding import published_figures
from dpdash.synthetic import SyntheticRelease, synthesize
from dpdash.workspace import facts_from_dict

__all__ = ["Refused", "Reproduction", "SyntheticReproduction", "TableReproduction"]


class Refused(DPDashError):
    """Nothing was released and nothing was spent: the message says why."""

    def _render_traceback_(self) -> list[str]:
        """What IPython shows for it (in a notebook): the message alone, no traceback."""
        return [f"Not released, nothing was spent: {self}"]


@dataclass(frozen=True, slots=True, kw_only=True)
class TableReproduction:
    """What every reproduction states about its table and ledger, and the two steps they share: reading the
    table (``load``) and spending from the ledger (``_spend``)."""

    release: str  # what was released, for people: "histogram of sex with Geometric, ε = 5"
    ledger: str
    table_name: str
    identity: str
    fingerprint: str
    coercions: Sequence[Sequence[str]]
    lossy: bool

    def load(self, path: str | Path) -> pd.DataFrame:
        """The table as the app queried it: the file read as the app reads it, its identity checked, then
        the app's type changes re-applied and the result checked against the table the app queried."""
        file = Path(path)
        try:
            data = file.read_bytes()
        except OSError as error:
            raise Refused(f"cannot read {path}: {error}") from error
        try:
            table = load_table(data, file.name).data
        except DPDashError as error:
            raise Refused(f"cannot read {path} as a table: {error}") from error
        if fingerprint(table) != self.identity:
            raise Refused(
                f"{path} is not the table this release was made from ({self.table_name!r} in the app): its "
                f"identity is {fingerprint(table)}, the dataset's is {self.identity}"
            )
        try:
            for column, kind in self.coercions:
                table = coerce_column(table, column, kind, drop_invalid=self.lossy)
        except DPDashError as error:
            raise Refused(f"the app's type changes do not apply to {path}: {error}") from error
        if dataset_fingerprint(table) != self.fingerprint:
            raise Refused(
                "after the type changes the table is not the one the app queried (its fingerprint is "
                f"{dataset_fingerprint(table)}, the app's was {self.fingerprint}), so the release would not "
                "be the same query"
            )
        return table

    def _spend(
        self,
        ledger_path: str,
        session: str,
        draw: Callable[[], Any],
        recorded: Callable[[], None] = lambda: None,
    ) -> tuple[Any, Dataset, BudgetStatus]:
        """(``draw()``'s release, the dataset, its status after the spend): the release drawn only once the
        ledger and the dataset's budget are found, then recorded in the ledger under a new session named
        ``session``, all or nothing, and ``recorded()`` called at once; refused (``Refused``) if the ledger
        or the budget is missing, or if it does not fit."""
        if "://" not in ledger_path and not Path(ledger_path).is_file():
            raise Refused(
                f"there is no dpdash ledger at {ledger_path}; this release was spent from {self.ledger}: "
                "give that ledger's file (or URL) with --ledger (in the notebook: LEDGER)"
            )
        try:
            with Ledger(ledger_path) as ledger:
                dataset = ledger.find_dataset(self.identity)
                if dataset is None:
                    raise Refused(
                        f"the ledger {ledger_path} has no budget for this dataset ({self.identity}): set it "
                        "on the app's Data page with this ledger, or with Ledger.add_dataset"
                    )
                result = draw()
                try:  # the spend is committed before anything is printed
                    ledger.spend_release(dataset, result, session=ledger.start_session(session))
                except BudgetExceededError as error:
                    raise Refused(f"the budget is short: {error}") from error
                recorded()
                return result, dataset, ledger.status(dataset)
        except Refused:
            raise
        except DPDashError as error:
            raise Refused(str(error)) from error

    def _spent(self, ledger_path: str, dataset: Dataset, status: BudgetStatus) -> None:
        print(f"Released: {self.release}, on the table {self.table_name!r}")
        print(
            f"Spent from the ledger {ledger_path}, dataset {dataset.name!r}: spent epsilon = "
            f"{status.spent.epsilon:.4g} of {dataset.budget.epsilon:g}, "
            f"remaining {status.remaining_epsilon:.4g}"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Reproduction(TableReproduction):
    """A release of a statistic to make again (the fields are the release record's, see
    ``release_script``)."""

    query: dict[str, Any]
    mechanism: str
    options: dict[str, Any] = field(default_factory=dict)
    epsilon: float
    delta: float | None
    confidence: float
    postprocess: Sequence[str] = ()

    def preview(self, table: pd.DataFrame) -> SimulatedRelease:
        """Simulated values (numpy, not release-grade), printed as such; spends nothing, reads no budget."""
        try:
            simulated = simulate_release(
                query_from_dict(self.query), self.mechanism, table, epsilon=self.epsilon, delta=self.delta,
                confidence=self.confidence, postprocess=self.postprocess, options=self.options,
            )  # fmt: skip
        except DPDashError as error:
            raise Refused(str(error)) from error
        print("SIMULATED PREVIEW: not a release, no budget spent; do not publish these numbers.")
        print(f"Would release: {self.release}")
        shown = published_figures(simulated)  # rounded to what each ± supports, as the app shows them
        for label, value, width in zip(simulated.labels, shown.texts, shown.half_width_texts, strict=False):
            print(f"simulated {label}: {value} ± {width}")
        print(simulated.accuracy.column_label + ": " + simulated.definition)
        return simulated

    def spend(self, table: pd.DataFrame, ledger_path: str | Path, *, session: str) -> Release:
        """Release on ``table``, recorded in the ledger at ``ledger_path`` (a file that exists, or a
        PostgreSQL URL) under a new session named ``session`` before anything is printed; refused if the
        ledger or the dataset's budget is missing, or if the release does not fit."""
        ledger_path = str(ledger_path)
        result, dataset, status = self._spend(ledger_path, session, lambda: release(
            query_from_dict(self.query), self.mechanism, table, epsilon=self.epsilon, delta=self.delta,
            confidence=self.confidence, postprocess=self.postprocess, options=self.options,
            identity=self.identity,
        ))  # fmt: skip
        self._spent(ledger_path, dataset, status)
        shown = published_figures(result)  # rounded to what each ± supports; the ledger keeps the full values
        for label, value, width in zip(result.labels, shown.texts, shown.half_width_texts, strict=False):
            print(f"{label}: {value} ± {width}")
        print(result.accuracy.column_label + ": " + result.accuracy.definition)
        return result



@dataclass(frozen=True, slots=True, kw_only=True)
class SyntheticReproduction(TableReproduction):
    """A synthetic table to draw again (the fields are its record's, see
    ``dpdash.synthetic_export.synthetic_script``): ``dpdash.synthesize`` with the same columns, declared
    facts (``facts``, as ``dpdash.workspace.facts_to_dict`` writes them), bins (``bins``: column → edges),
    method (and AIM's ``workload`` of column pairs), ε, δ and ``rows``. ``preview`` draws with numpy
    seeded by ``seed``; ``spend`` on OS randomness."""

    method: str
    columns: Sequence[str]
    facts: dict[str, Any]
    bins: dict[str, list[float]]
    epsilon: float
    delta: float
    rows: int
    seed: int
    workload: Sequence[Sequence[str]] = ()

    def _synthesize(self, table: pd.DataFrame, rng: int | None) -> SyntheticRelease:
        return synthesize(
            table, facts_from_dict(self.facts), epsilon=self.epsilon, delta=self.delta, method=self.method,
            rows=self.rows, rng=rng, identity=self.identity, columns=list(self.columns), bins=self.bins,
            workload=[tuple(pair) for pair in self.workload],
        )  # fmt: skip

    def preview(self, table: pd.DataFrame, *, shown: int = 10) -> SyntheticRelease:
        """A seeded draw (numpy, not release-grade) on the true table, its first ``shown`` rows printed
        as such; spends nothing, writes nothing, reads no budget."""
        try:
            drawn = self._synthesize(table, self.seed)
        except DPDashError as error:
            raise Refused(str(error)) from error
        print("SIMULATED PREVIEW: not a release, no budget spent; do not publish this table.")
        print(f"Would release: {self.release}")
        print(f"Would spend: {drawn.guarantee}")
        print(f"simulated table: {len(drawn.table)} rows; the first {min(shown, len(drawn.table))}:")
        print(drawn.table.head(shown).to_string(index=False))
        return drawn

    def spend(
        self, table: pd.DataFrame, ledger_path: str | Path, *, session: str, output: str | Path
    ) -> tuple[SyntheticRelease, Path]:
        """Draw the table anew on OS randomness, record it in the ledger at ``ledger_path`` (as ``_spend``:
        refused if the ledger or the budget is missing, or if it does not fit), and only then write its
        CSV to ``output`` (refused before anything is drawn if that file exists). The CSV is written
        beside ``output`` first and moved there as soon as the spend is recorded, so a spend is never left
        without its table; it is removed if the spend is refused."""
        ledger_path, target = str(ledger_path), Path(output)
        if target.exists():
            raise Refused(f"{target} exists already: give another file for the synthetic table")
        partial = target.with_name(f".{target.name}.partial")

        def draw() -> SyntheticRelease:
            drawn = self._synthesize(table, None)
            try:
                partial.write_bytes(drawn.to_csv())
            except OSError as error:
                raise Refused(f"cannot write the synthetic table to {target}: {error}") from error
            return drawn

        spent: list[bool] = []

        def put_in_place() -> None:  # the spend is recorded: from now on the table is kept, whatever happens
            spent.append(True)
            os.replace(partial, target)  # within one folder; if even this fails, the partial file stays

        try:
            drawn, dataset, status = self._spend(ledger_path, session, draw, put_in_place)
        except BaseException:
            if not spent:
                partial.unlink(missing_ok=True)  # a draw whose spend was refused: no file
            raise
        self._spent(ledger_path, dataset, status)
        print(f"Synthetic table: {len(drawn.table)} rows, written to {target}")
        print(f"Guarantee: {drawn.guarantee}")
        return drawn, target


def beside(table_file: str | Path, name: str = "synthetic") -> Path:
    """A file for a synthetic table beside ``table_file`` that does not exist yet: ``<stem>-<name>.csv``,
    else ``<stem>-<name>-2.csv``, and so on."""
    path = Path(table_file)
    stem = path.stem or "table"
    for n in range(1, 10_000):
        candidate = path.with_name(f"{stem}-{name}{'' if n == 1 else f'-{n}'}.csv")
        if not candidate.exists():
            return candidate
    raise Refused(f"too many synthetic tables beside {path}: give the file to write with --output")
