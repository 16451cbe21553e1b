"""Where a released table came from and how the app prepared it: what every reproduction (the script and
the notebook of a statistic, ``dpdash.export`` and ``dpdash.notebook``, and of a synthetic table,
``dpdash.synthetic_export``) states about its table and ledger besides the release itself."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dpdash import _validation as check
from dpdash.errors import ParameterTypeError
from dpdash.ledger.location import default_ledger_location
from dpdash.loading import COLUMN_KINDS
from dpdash.pg_urls import is_url, redact

__all__ = ["TableOrigin"]


@dataclass(frozen=True, slots=True, kw_only=True)
class TableOrigin:
    """The table a release was made from, as its reproductions restate it.

    Args:
        coercions: the type changes made after loading, in order, as (column, kind) pairs with kinds from
            ``dpdash.loading.COLUMN_KINDS``; kept as a tuple of pairs.
        lossy: whether values that did not convert became missing (``drop_invalid``).
        table_name: the table's name in the app (shown to people; a name with a dot is taken as its file's).
        ledger: the ledger the release was spent from (``Ledger.location``: a file, or a PostgreSQL URL);
            ``None``: ``default_ledger_location()`` when the values are written.

    Raises:
        ParameterError, ParameterTypeError: a coercion kind that does not exist; arguments of wrong types.

    >>> origin = TableOrigin(coercions=[("sex", "categorical")], table_name="people.csv")
    >>> origin.coercions, origin.table_file
    ((('sex', 'categorical'),), 'people.csv')
    """

    coercions: tuple[tuple[str, str], ...] = ()
    lossy: bool = False
    table_name: str = ""
    ledger: str | Path | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.lossy, bool):
            raise ParameterTypeError(f"lossy must be True or False, got lossy={self.lossy!r}")
        if not isinstance(self.table_name, str):
            raise ParameterTypeError(f"table_name must be a string, got {type(self.table_name).__name__}")
        if self.ledger is not None and not isinstance(self.ledger, str | os.PathLike):
            raise ParameterTypeError(
                f"ledger must be a file path, a PostgreSQL URL or None, got {type(self.ledger).__name__}"
            )
        object.__setattr__(self, "coercions", _coercions(self.coercions))

    @property
    def table_file(self) -> str:
        """The file the downloads name: the table's name when it looks like a file, else ``TABLE_FILE``."""
        return self.table_name if "." in self.table_name else "TABLE_FILE"

    def values(self, identity: str, fingerprint: str) -> dict[str, object]:
        """The table's constants of a reproduction, as plain data: ``LEDGER`` (``ledger``, or
        ``default_ledger_location()`` now; a URL without its password, a path made absolute),
        ``TABLE_NAME``, ``IDENTITY``, ``FINGERPRINT``, ``COERCIONS``, ``LOSSY``
        (``dpdash.reproduce.TableReproduction``'s fields)."""
        location = str(default_ledger_location() if self.ledger is None else self.ledger)
        location = redact(location) if is_url(location) else str(Path(location).expanduser().resolve())
        return {
            "LEDGER": location,
            "TABLE_NAME": self.table_name,
            "IDENTITY": identity,
            "FINGERPRINT": fingerprint,
            "COERCIONS": [list(pair) for pair in self.coercions],
            "LOSSY": self.lossy,
        }


def _coercions(coercions: object) -> tuple[tuple[str, str], ...]:
    if isinstance(coercions, str) or not isinstance(coercions, Sequence):
        raise ParameterTypeError(f"coercions must be a sequence of (column, kind) pairs, got {coercions!r}")
    out = []
    for pair in coercions:
        if isinstance(pair, str) or len(pair) != 2 or not all(isinstance(x, str) for x in pair):
            raise ParameterTypeError(f"coercions must be (column, kind) pairs of strings, got {pair!r}")
        column, kind = pair
        out.append((column, check.one_of(kind, "kind", COLUMN_KINDS)))
    return tuple(out)
