"""Benchmark: server time of the app's pages with a 1 000 000-row table loaded (Streamlit AppTest).

Targets (issue 6): first load of the app ≤ 3 s; Mechanism explorer rerun ≤ 300 ms; a histogram
preview ≤ 500 ms. Issue 7: the Budget page rerun with a 1 000-release ledger ≤ 500 ms. Baselines
measured in the same run: the bare pandas aggregation a histogram preview
needs (``value_counts`` on the column), and an empty Streamlit rerun (the framework's own cost).
Each figure is the median of 5 reruns after a warm-up.

Run: ``.venv/bin/python bench/bench_pages.py`` (or ``make bench``).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from streamlit.testing.v1 import AppTest

from dpdash.accounting import Budget, event_for
from dpdash.datasets import synthetic_patients
from dpdash.ledger import Ledger, fingerprint
from dpdash.mechanisms import DiscreteGaussian, Gaussian, Geometric, Laplace, Staircase
from ui.state import ActiveTable

ROOT = Path(__file__).resolve().parents[1]
ROWS = 1_000_000


def median_time(action, repeats: int = 5) -> float:  # type: ignore[no-untyped-def]
    action()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    # The ledger is opened lazily, so pointing it at a scratch file here is early enough.
    os.environ["DPDASH_LEDGER"] = str(Path(tempfile.mkdtemp(prefix="dpdash-bench-")) / "ledger.sqlite")
    example = synthetic_patients(ROWS)
    digest = fingerprint(example.data)
    table = ActiveTable("patients (1M rows)", "benchmark", example.data, example.facts, digest, digest)
    print(f"table: {ROWS:,} rows × {example.data.shape[1]} columns")

    start = time.perf_counter()
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    app.session_state["dpdash_dataset"] = table
    app.run()
    first_load = time.perf_counter() - start

    empty = AppTest.from_string("import streamlit as st\nst.write('x')", default_timeout=60)
    empty.run()
    framework = median_time(empty.run)

    app.switch_page("pages/explorer.py").run()
    explorer = median_time(app.run)

    app.switch_page("pages/release.py").run()
    app.selectbox(key="release_kind").set_value("Histogram").run()
    app.selectbox(key="release_column").set_value("diagnosis").run()
    preview = median_time(app.run)
    bare = median_time(lambda: example.data["diagnosis"].value_counts())
    assert not app.exception, [e.value for e in app.exception]

    # A 1 000-release ledger for this table: 100 releases of each of 10 mechanism settings.
    settings = [
        Laplace(epsilon=0.01, sensitivity=1.0), Laplace(epsilon=0.02, sensitivity=5.0),
        Geometric(epsilon=0.01, sensitivity=1), Geometric(epsilon=0.015, sensitivity=5),
        Gaussian(epsilon=0.05, delta=1e-9, sensitivity=1.0),
        Gaussian(epsilon=0.1, delta=1e-9, sensitivity=2.0),
        DiscreteGaussian(epsilon=0.05, delta=1e-9, sensitivity=1), Staircase(epsilon=0.01, sensitivity=1.0),
        Laplace(epsilon=0.005, sensitivity=1.0), Geometric(epsilon=0.005, sensitivity=1),
    ]  # fmt: skip
    with Ledger() as ledger:
        ds = ledger.add_dataset(name="bench", fingerprint=digest, budget=Budget(epsilon=100.0, delta=1e-5))
        for mechanism in settings:
            ledger.spend_many(ds, [event_for(mechanism, query="bench")] * 100)
    app.switch_page("pages/budget.py").run()
    assert not app.exception, [e.value for e in app.exception]
    budget_page = median_time(app.run)

    rows = [
        ("first load of the app (home page)", first_load, 3.0, None),
        ("Mechanism explorer rerun", explorer, 0.3, framework),
        ("histogram preview rerun (12 categories)", preview, 0.5, bare),
        ("Budget page rerun, 1 000-release ledger", budget_page, 0.5, framework),
    ]
    print(f"baselines: empty Streamlit rerun {framework * 1e3:.1f} ms; "
          f"pandas value_counts on 1M rows {bare * 1e3:.1f} ms")  # fmt: skip
    failed = False
    for label, seconds, target, baseline in rows:
        ratio = f"{seconds / baseline:6.1f}× its baseline" if baseline else ""
        verdict = "ok" if seconds <= target else "MISSED"
        failed |= seconds > target
        print(f"{label:<42} {seconds * 1e3:8.1f} ms  (target ≤ {target * 1e3:.0f} ms: {verdict})  {ratio}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
