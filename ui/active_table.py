"""The table a browser session works on: its data or connected source, its facts and its identities.

Apart from ``ui.state`` (which loads, keeps and changes it) so that the modules ``ui.state`` uses can name
the type without importing ``ui.state``.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from dpdash.datasets import PublicFacts
from dpdash.engines import Source, SourceSpec

__all__ = ["ActiveTable"]


@dataclass(frozen=True, eq=False)
class ActiveTable:
    """The table this session works on, with its declared public facts.

    ``identity`` is the key its budget is kept under (``dpdash.ledger.fingerprint`` of the table as
    first loaded: the same whatever types are chosen later); ``fingerprint`` is the exact table as it is now
    (``dataset_fingerprint``, what a release record states); ``coercions`` are the type changes applied
    since loading, in order, as (column, kind), with ``lossy`` whether values that did not convert became
    missing.

    A connected table (Parquet files, a DuckDB file, PostgreSQL, Spark) stays where it lives: ``engine`` is
    its open ``dpdash.engines.Source``, ``connection`` where it lives (no password), ``data`` only the
    owner's sample of its first rows, and ``row_count`` the engine's count; both fingerprints are the
    source's ``fingerprint()``.
    """

    name: str
    source: str
    data: pd.DataFrame
    facts: PublicFacts
    fingerprint: str
    identity: str
    coercions: tuple[tuple[str, str], ...] = ()
    lossy: bool = False
    engine: Source | None = None
    connection: SourceSpec | None = None
    row_count: int | None = None

    @property
    def rows(self) -> int:
        """The table's number of rows (the engine's count for a connected table)."""
        return len(self.data) if self.row_count is None else self.row_count

    @property
    def queryable(self) -> pd.DataFrame | Source:
        """What queries and releases run on: the DataFrame, or the connected source."""
        return self.data if self.engine is None else self.engine
