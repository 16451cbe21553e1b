"""Benchmark: the ledger's spends and imports with long, varied histories.

Run from the repository root: ``.venv/bin/python bench/bench_ledger.py [sizes...] [--only=pld,tightest]
[--no-import]`` (default sizes 200 1000 10000, every accountant, and the import).

"Varied" means nearly every entry has its own setting (log-uniform ε in [0.002, 0.2], Laplace, Gaussian
with various σ, geometric, discrete Gaussian, randomized response, one in ten partitioned by region, and
ρ-zCDP events for the zcdp and rdp ledgers), so composing identical settings by count does not help.

For each size N and accountant (tightest, the default, first; then basic, pld, rdp, zcdp) a ledger holds
N such entries and we time:

(a) spends in a warm process (the ledger object has read and composed its history: the app's case), 20 in
    a row: median, fastest and slowest;
(b) one spend in a cold process (a fresh ``Ledger`` on the file and empty caches: the first spend);

each with how long it held the write lock (what it makes every other writer of the ledger wait for),

each with a roomy budget (the history is far from it) and, where the size allows, a tight one (ε just
above the accountant's total, so that only the accountant's own, most expensive, bound certifies the
spend). Then (c) importing an export of 3 000 varied entries into an empty ledger.

Baselines, measured in the same run: one SQLite insert + commit of the same entry in the same kind of
file (WAL, synchronous = FULL), and reading and parsing the N entries. Each time is printed with its ratio
to the insert + commit.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import contextlib
import hashlib
import logging
import math
import random
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator

from bench.timing import best_of
from dpdash import DiscreteGaussian
from dpdash.accounting import (
    Budget,
    GaussianEvent,
    GeometricEvent,
    LaplaceEvent,
    PrivacyEvent,
    PureDPEvent,
    ZCDPEvent,
    clear_caches,
    event_for,
    get_accountant,
)
from dpdash.accounting.events import canonical_json
from dpdash.ledger import Ledger
from dpdash.ledger import ledger as ledger_module
from dpdash.ledger.records import INSERT_ENTRY

SIZES = (200, 1_000, 10_000)
ACCOUNTANTS = ("tightest", "basic", "pld", "rdp", "zcdp")
IMPORT_SIZE = 3_000
# Warm spends timed one after another (PLD folds its recent releases now and then: report the spread).
WARM_SPENDS = 20
DELTA = 1e-5
# Tight budgets need the accountant's total of the history once (to place the budget just above it).
TIGHT_UP_TO = {"tightest": 1_000, "pld": 10_000, "basic": 10_000, "rdp": 10_000, "zcdp": 10_000}


def varied_events(n: int, accountant: str, seed: int = 0) -> list[PrivacyEvent]:
    """n releases, nearly all with distinct settings, of the kinds ``accountant`` supports."""
    rng = random.Random(seed)
    kinds = ["laplace", "gaussian", "geometric", "discrete_gaussian", "randomized_response"]
    if accountant in ("zcdp", "rdp"):
        kinds.append("zcdp")
    events: list[PrivacyEvent] = []
    for i in range(n):
        kind = rng.choice(kinds)
        epsilon = math.exp(rng.uniform(math.log(0.002), math.log(0.2)))
        partition = ("region", rng.choice("NSEW")) if rng.random() < 0.1 else None
        label = {"query": f"query {i}", "partition": partition}
        if kind == "laplace":
            event: PrivacyEvent = LaplaceEvent(epsilon=epsilon, sensitivity=rng.choice([1.0, 2.0]), **label)
        elif kind == "gaussian":
            event = GaussianEvent.from_sigma(
                sigma=rng.uniform(5.0, 200.0), sensitivity=1.0, delta=1e-9, **label
            )
        elif kind == "geometric":
            event = GeometricEvent(epsilon=epsilon, sensitivity=rng.choice([1, 2]), **label)
        elif kind == "discrete_gaussian":
            event = event_for(DiscreteGaussian(epsilon=3 * epsilon, delta=1e-9, sensitivity=1), **label)
        elif kind == "randomized_response":
            event = PureDPEvent(epsilon=epsilon, mechanism="randomized response", **label)
        else:
            event = ZCDPEvent(rho=epsilon * epsilon / 2.0, **label)
        events.append(event)
    return events


def write_history(
    ledger: Ledger, name: str, budget: Budget, accountant: str, events: list[PrivacyEvent]
) -> str:
    """Register a dataset and write its entries directly (no budget checks: this is only the set-up)."""
    fingerprint = "sha256:" + hashlib.sha256(name.encode()).hexdigest()
    ledger.add_dataset(name=name, fingerprint=fingerprint, budget=budget, accountant=accountant)
    with ledger._transaction() as conn:
        dataset_id = ledger._dataset_id(conn, fingerprint)
        now = ledger_module._now()
        conn.executemany(
            INSERT_ENTRY,
            [
                (
                    f"{name}-{i}",
                    dataset_id,
                    None,
                    now,
                    e.query,
                    e.mechanism,
                    e.epsilon,
                    e.delta,
                    e.rho,
                    canonical_json(e.to_dict()),
                )
                for i, e in enumerate(events)
            ],
        )
    return fingerprint


def insert_commit_baseline(folder: Path, event: PrivacyEvent) -> float:
    """One INSERT + COMMIT of the entry's row in an SQLite file set up as the ledger's (WAL, FULL)."""
    conn = sqlite3.connect(str(folder / "baseline.sqlite"), isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("CREATE TABLE entries (id INTEGER PRIMARY KEY, uid TEXT UNIQUE, event TEXT)")
    text = canonical_json(event.to_dict())
    counter = iter(range(10**9))

    def insert() -> None:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO entries (uid, event) VALUES (?, ?)", (f"u{next(counter)}", text))
        conn.execute("COMMIT")

    seconds = best_of(insert, repeats=20)
    conn.close()
    return seconds


_LOCKED: list[float] = []  # seconds each transaction held the write lock, in order


def _track_the_lock() -> None:
    """Record how long each ``Ledger._transaction`` holds the write lock (BEGIN IMMEDIATE to COMMIT)."""
    transaction = Ledger._transaction

    @contextlib.contextmanager
    def tracked(ledger: Ledger, doing: str = "write to the ledger") -> Iterator[sqlite3.Connection]:
        start = time.perf_counter()
        try:
            with transaction(ledger, doing) as conn:
                yield conn
        finally:
            _LOCKED.append(time.perf_counter() - start)

    Ledger._transaction = tracked  # type: ignore[method-assign]


def timed(function: Callable[[], object]) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def show(label: str, seconds: float, base: float) -> None:
    print(f"  {label:44s} {seconds * 1e3:10.2f} ms  {seconds / base:9.1f}x insert+commit")


def spender(ledger: Ledger, fingerprint: str, events: list[PrivacyEvent]) -> Callable[[], object]:
    """A call that spends the next of ``events``."""
    fresh = iter(events)
    return lambda: ledger.spend(fingerprint, next(fresh))


def bench_size(folder: Path, n: int, accountant: str, base: float) -> None:
    events = varied_events(n, accountant)
    new = varied_events(WARM_SPENDS + 30, accountant, seed=n + 1)
    keeper = get_accountant(accountant)
    path = folder / f"{accountant}-{n}.sqlite"
    budgets = {"roomy": Budget(1e6, 0.5)}
    if n <= TIGHT_UP_TO[accountant]:
        # Room for the spends below (cold, then the warm ones): only the accountant's own bound fits.
        budgets["tight"] = Budget(keeper.epsilon(events + new[: WARM_SPENDS + 1], DELTA) * (1 + 1e-6), DELTA)
    with Ledger(path) as ledger:
        fingerprints = {
            kind: write_history(ledger, f"{accountant}-{n}-{kind}", budget, accountant, events)
            for kind, budget in budgets.items()
        }
    print(f"\n{accountant}, N = {n} varied entries ({len({e.setting for e in events})} distinct settings):")
    clear_caches()
    with Ledger(path) as ledger:
        show("read and parse the entries (cold)", timed(lambda: ledger.entries(fingerprints["roomy"])), base)
    for kind, fingerprint in fingerprints.items():
        clear_caches()
        with Ledger(path) as ledger:
            spend = spender(ledger, fingerprint, new)
            cold = timed(spend)
            cold_locked = _LOCKED[-1]
            warm = sorted(timed(spend) for _ in range(WARM_SPENDS))
            warm_locked = statistics.median(_LOCKED[-WARM_SPENDS:])
        show(f"spend, cold process, {kind} budget", cold, base)
        show("  of which holding the write lock", cold_locked, base)
        show(f"spend, warm process, {kind} budget (median)", statistics.median(warm), base)
        show(f"  fastest / slowest of {WARM_SPENDS} in a row", warm[0], base)
        show("", warm[-1], base)
        show("  of which holding the write lock (median)", warm_locked, base)


def bench_import(folder: Path, base: float) -> None:
    events = varied_events(IMPORT_SIZE, "tightest", seed=7)
    with Ledger(folder / "export-source.sqlite") as source:
        fingerprint = write_history(source, "import", Budget(1e6, 0.5), "tightest", events)
        start = time.perf_counter()
        text = source.export_json(fingerprint)
        export = time.perf_counter() - start
        source_key = source.public_key
    print(f"\nimport of an export of {IMPORT_SIZE} varied entries ({len(text) / 1e6:.2f} MB), tightest:")
    show("export_json (warm)", export, base)
    clear_caches()
    with Ledger(folder / "export-target.sqlite") as target:
        target.trust_key(source_key)
        seconds = timed(lambda: target.import_json(text))
        locked = _LOCKED[-1]
    show("import_json into an empty ledger (cold)", seconds, base)
    show("  of which holding the write lock", locked, base)


def main() -> None:
    logging.getLogger().setLevel(logging.ERROR)
    _track_the_lock()
    sizes = [int(arg) for arg in sys.argv[1:] if arg.isdigit()] or list(SIZES)
    only = [name for arg in sys.argv[1:] if arg.startswith("--only=") for name in arg[7:].split(",")]
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        base = insert_commit_baseline(folder, varied_events(1, "tightest")[0])
        print(f"baseline: one SQLite insert + commit (WAL, synchronous = FULL): {base * 1e3:.2f} ms")
        for n in sizes:
            for accountant in only or ACCOUNTANTS:
                bench_size(folder, n, accountant, base)
        if "--no-import" not in sys.argv:
            bench_import(folder, base)


if __name__ == "__main__":
    main()
