"""The persistent budget ledger: what was spent from which dataset, kept where every process and server
that shares it sees it. It uses ``dpdash.accounting`` for the mathematics (never the reverse).

- ``Ledger``: datasets with budgets, sessions and releases in one SQLite file, or in a PostgreSQL database
  shared by many processes (``Ledger("postgresql://...")``); a spend checks and records in one
  transaction, or raises ``BudgetExceededError`` saying what remains; every write records who did it in
  the log of actions (``Ledger.actions``), in the same transaction; an analyst's release requests wait for
  the owner's decision (``Ledger.request_release``, ``decide_request``).
- ``releases``: releases as people count them (``Ledger.releases``, ``release_count``): the entries one
  spend wrote, with the values it published; a mean's sum and count are two entries and one release.
- ``records``: the ledger's values (``Dataset``, ``Entry``, ``Session``, ``BudgetStatus``, ...);
  ``storage``: the SQLite and PostgreSQL backends (``storage.postgres_setup``: a least-privilege
  PostgreSQL deployment); ``ledger_file``: the SQLite file's safety; ``transfer``, ``exports`` and
  ``signing``: signed exports and imports; ``versions``, ``actions``, ``published``, ``request_ids`` and
  ``release_requests``: what the ledger keeps besides spends.

>>> import tempfile, pathlib
>>> from dpdash import Laplace
>>> from dpdash.accounting import Budget, event_for
>>> ledger = Ledger(pathlib.Path(tempfile.mkdtemp()) / "ledger.sqlite")
>>> ds = ledger.add_dataset(name="survey", fingerprint="sha256:" + "ab" * 32, budget=Budget(1.0))
>>> _ = ledger.spend(ds, event_for(Laplace(epsilon=0.25, sensitivity=1.0), query="count"))
>>> round(ledger.status(ds).remaining_epsilon, 6)
0.75
>>> ledger.close()
"""

from dpdash.accounting.budget import Budget
from dpdash.errors import BudgetExceededError, LedgerError
from dpdash.ledger.ledger import Ledger, fingerprint
from dpdash.ledger.location import default_ledger_location, default_ledger_path
from dpdash.ledger.records import (
    Action,
    BudgetStatus,
    Dataset,
    Entry,
    ImportReport,
    RequestRecord,
    Session,
)
from dpdash.ledger.releases import RecordedRelease, release_count

__all__ = [
    "Action",
    "Budget",
    "BudgetExceededError",
    "BudgetStatus",
    "Dataset",
    "Entry",
    "ImportReport",
    "Ledger",
    "LedgerError",
    "RecordedRelease",
    "RequestRecord",
    "Session",
    "default_ledger_location",
    "default_ledger_path",
    "fingerprint",
    "release_count",
]
