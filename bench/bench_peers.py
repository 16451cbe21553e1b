"""Benchmark: dpdash beside OpenDP, PipelineDP, Tumult Analytics and SmartNoise SQL on the same data, ε and
unit (issue 24): the time of a release, the peak memory, and the error against the exact expectation of a
uniform choice of c rows per person.

The data. ``tests/panel.py``'s person-level panel (pid, industry, wage): each person has 1–10 rows and a
favourite of 8 industries that most of their rows repeat. ``--panels K`` panels (seeds 24, 25, …) of about
``--rows`` rows are written as Parquet files to a scratch folder (``--dir``), which every tool's process
reads: every tool gets the same files. The queries, at ε = 1 (pure DP) with at most c = 2 rows per person
(add or remove one person): the count of rows, the histogram of ``industry`` over the 8 public categories,
the sum of ``wage`` clamped to [0, 200].

The error. MATH.md asks that truncation keep each of a person's n rows with probability min(1, c/n);
``tests/panel.py`` gives the exact mean (and variance) of each answer under that uniform choice. Each tool
releases each query ``--repeats`` times on each panel (by default 20 panels × 1 release: 20 releases); the
error of a release is its noisy value minus that exact mean, per cell. The table shows the mean absolute
error per cell (± its standard error over the panels), the same divided by the mean cell (relative), mean
|z| (the error in standard deviations of the uniform choice's sampling plus the tool's noise: about 0.80,
E|Z|, for an unbiased uniform choice, more for a skewed one) and E abs noise, the exact mean absolute value
of the noise the tool says it adds. The count of kept rows, Σ min(n, c), is the same for every fair
truncation, so its error is the noise alone, and 20 releases tell two tools' noise apart only by more than
about 30 %; E abs noise compares them exactly. At 10⁶ rows the histogram's and the sum's errors are almost
all the truncation's sampling (a cell's sd is 87–125 rows, the sum's 8 800, against a noise scale of 2 and
400): that is why the panels differ. A tool whose truncation is a fixed function of the rows (dpdash,
Tumult) draws it once per panel, where the others draw it again at each release; one release per panel
puts them on the same footing (``--panels 1 --repeats 20`` repeats one panel instead).

Time and memory. Each tool × query runs in a fresh process (``bench/peers/<tool>_worker.py``) in its own
interpreter: dpdash in this venv, each peer in a venv of its own that the bench creates under ``--venvs``
(default ``~/.cache/dpdash-bench``) and fills with ``pip install`` of the pinned version (never in
requirements*.txt); a peer that cannot be installed is reported and skipped. "release s" is the median wall
time of one release, from the loaded table to the noisy values, in each tool's usual way (a new context,
session or accountant for ε each time, as one release is written; its calibration included). Loading is
timed apart: dpdash, OpenDP and Tumult read the Parquet file lazily (at each release: DuckDB, Polars,
Spark), PipelineDP and SmartNoise get the rows in memory (pandas) once per panel. "peak MB" is the largest
resident memory of the process with all its children (Spark's JVM and Python workers), sampled every
0.05 s, and at least the kernel's ``ru_maxrss`` of the process (``os.wait4``).

How each peer is configured (details in each worker's docstring):
- dpdash: ``release(query, Geometric | Laplace, open_files(path), epsilon=1)`` with
  ``Facts(rows_per_person=2, id_column="pid")``; release-grade samplers; histogram ``outside="drop"``.
  "dpdash weighted" adds ``bounding="weight"``: each of a person's n rows counts min(1, c/n), which is
  the exact mean this bench measures errors against, so its error is its noise alone (Laplace for the
  fractional histogram and sum, geometric for the count, whose answer stays whole). No peer offers it.
- OpenDP 0.16 (Polars context): ``unit_of(contributions=1, identifier="pid")`` and
  ``truncate_per_group(2)`` (a random shuffle per person); integer Laplace for counts, Laplace for the
  float sum with a public ``max_length`` margin of 2 × ``--rows`` (OpenDP requires one for a float sum).
- PipelineDP 0.3.1 (LocalBackend): ``max_contributions=2`` (2 rows per person sampled uniformly across
  all partitions; the per-partition pair (2, 1) or (1, 2) would also bound a person to 2 rows but biases
  the histogram); public partitions; continuous Laplace noise, also on the counts.
- Tumult Analytics 0.21 (Spark ``local[2]``): ``AddRowsWithID("pid")`` and ``MaxRowsPerID(2)`` (rows
  ordered by a hash of the row); ``PureDPBudget(1)``: geometric for counts, Laplace for the sum.
- SmartNoise SQL 1.0.10 (pandas): ``max_ids: 2``, ``sample_max_ids: true`` (random ROW_NUMBER per person),
  ``censor_dims: false`` (public categories, no δ); continuous Laplace for every column, the counts then
  made integers by ``int()`` (towards zero: E|noise| 2.04 where the integer Laplace has 1.92).
Every tool ends with the same noise scale: 2 for the counts (L1 sensitivity c = 2) and 400 for the sum
(c · 200), so their errors differ only by the truncation and by integer or continuous noise.

Run: ``.venv/bin/python bench/bench_peers.py [--rows 1e6] [--panels 20] [--repeats 1] [--peers opendp …]``
(about 25 minutes at 10⁶ rows on 2 cores, after the venvs are made; ``--rows 1e5`` for a quick check).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.panel import CATEGORIES, WAGE_BOUNDS, expected_histogram, expected_sum, panel  # noqa: E402

WORKERS = Path(__file__).resolve().parent / "peers"
QUERIES = ("count", "histogram", "sum")
EPSILON = 1.0
C = 2
FAIR_MEAN_ABS_Z = math.sqrt(2 / math.pi)  # E|Z| of a standard normal: an unbiased, fair tool's mean |z|
MB = 1024**2
WEIGHTED = "dpdash weighted"  # the same worker with bounding="weight"


@dataclass(frozen=True, slots=True)
class Peer:
    """A tool beside dpdash: its venv's name, what pip installs there (pinned), and its worker."""

    key: str
    label: str
    distribution: str
    version: str
    requirements: tuple[str, ...]

    @property
    def worker(self) -> Path:
        return WORKERS / f"{self.key}_worker.py"


PEERS = (
    Peer("opendp", "OpenDP", "opendp", "0.16.0", ("opendp[polars]==0.16.0",)),
    Peer("pipelinedp", "PipelineDP", "pipeline-dp", "0.3.1", ("pipeline-dp==0.3.1", "pandas", "pyarrow")),
    Peer("tumult", "Tumult Analytics", "tmlt.analytics", "0.21.0", ("tmlt.analytics==0.21.0",)),
    Peer("smartnoise", "SmartNoise SQL", "smartnoise-sql", "1.0.10", ("smartnoise-sql==1.0.10", "pyarrow")),
)


class Unavailable(Exception):
    """A peer that cannot be installed or run here; the reason is reported and the bench goes on."""


# ---- the peers' venvs ---------------------------------------------------------------------------------


def installed_version(python: Path, distribution: str) -> str | None:
    probe = f"import importlib.metadata as m; print(m.version({distribution!r}))"
    done = subprocess.run([str(python), "-c", probe], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def ensure_venv(peer: Peer, root: Path) -> Path:
    """The python of ``root/<peer>``, a venv holding the pinned peer (created and filled if needed)."""
    folder = root / peer.key
    python = folder / "bin" / "python"
    if python.exists() and installed_version(python, peer.distribution) == peer.version:
        return python
    print(f"  making {folder}: pip install {' '.join(peer.requirements)}", flush=True)
    if not python.exists():
        made = subprocess.run([sys.executable, "-m", "venv", str(folder)], capture_output=True, text=True)
        if made.returncode != 0:
            raise Unavailable(f"python -m venv failed: {_tail(made.stderr)}")
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", *peer.requirements], capture_output=True, text=True
    )
    if install.returncode != 0:
        raise Unavailable(
            f"pip install {' '.join(peer.requirements)} failed on Python "
            f"{sys.version_info.major}.{sys.version_info.minor}: {_tail(install.stderr)}"
        )
    found = installed_version(python, peer.distribution)
    if found != peer.version:
        raise Unavailable(f"{peer.distribution} {peer.version} asked for, {found} installed")
    return python


def _tail(text: str, lines: int = 3) -> str:
    """The last lines of a tool's error output, without pip's notes on unreachable local indexes."""
    kept = [line for line in text.strip().splitlines() if line and not line.startswith("WARNING: Location")]
    return " | ".join(kept[-lines:]) or "(no message)"


# ---- one worker process, timed and measured ------------------------------------------------------------


def tree_rss(pid: int) -> int:
    """The resident memory (bytes) of a process and all its descendants, read from /proc."""
    total, stack, seen = 0, [pid], set()
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        try:
            with open(f"/proc/{current}/statm") as statm:
                total += int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as children:
                    stack.extend(int(child) for child in children.read().split())
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return total


def run_worker(python: Path, worker: Path, spec: dict[str, Any], timeout: float) -> tuple[dict, float, float]:
    """Run one worker on ``spec`` in a fresh process: (its answer, its wall seconds, its peak MB)."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        process = subprocess.Popen(
            [str(python), str(worker), json.dumps(spec)], stdout=out, stderr=err, cwd=spec["scratch"], env=env
        )
        peak = [0]
        finished = threading.Event()

        def sample() -> None:
            while not finished.wait(0.05):
                peak[0] = max(peak[0], tree_rss(process.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        timer = threading.Timer(timeout, process.kill)
        timer.start()
        try:
            _, status, usage = os.wait4(process.pid, 0)  # the child's own rusage (Popen.wait would lose it)
        finally:
            timer.cancel()
            finished.set()
            sampler.join()
        process.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        if process.returncode != 0:
            raise Unavailable(f"worker exited with {process.returncode}: {_tail(err.read())}")
        lines = out.read().strip().splitlines()
        if not lines:
            raise Unavailable(f"worker printed nothing: {_tail(err.read())}")
        answer = json.loads(lines[-1])
    return answer, wall, max(peak[0], usage.ru_maxrss * 1024) / MB


# ---- data and its exact expectation ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Expectation:
    """Per query, the exact mean and variance of each cell under a uniform choice of C rows per person."""

    mean: dict[str, np.ndarray]
    var: dict[str, np.ndarray]


def write_panels(rows: int, count: int, folder: Path) -> tuple[list[Path], list[Expectation], int]:
    """``count`` panels of about ``rows`` rows as Parquet files, their expectations, the largest size."""
    paths, expectations, largest = [], [], 0
    for seed in range(24, 24 + count):
        df = panel(rows, "small", seed=seed)
        path = folder / f"panel_{rows}_{seed}.parquet"
        df.to_parquet(path, index=False)
        hist_mean, hist_var = expected_histogram(df, C)
        sum_mean, sum_var = expected_sum(df, C)
        kept = float(df.groupby("pid").size().clip(upper=C).sum())
        expectations.append(
            Expectation(
                mean={
                    "count": np.array([kept]),
                    "histogram": hist_mean.reindex(list(CATEGORIES)).to_numpy(float),
                    "sum": np.array([sum_mean]),
                },
                var={
                    "count": np.array([0.0]),
                    "histogram": hist_var.reindex(list(CATEGORIES)).to_numpy(float),
                    "sum": np.array([sum_var]),
                },
            )
        )
        paths.append(path)
        largest = max(largest, len(df))
    return paths, expectations, largest


# ---- the measurements -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Result:
    """One tool on one query."""

    tool: str
    query: str
    release_seconds: float
    load_seconds: float
    process_seconds: float
    peak_mb: float
    mae: float
    mae_se: float
    relative: float
    mean_abs_z: float
    noise_mean_abs: float
    noise: str
    version: str


def noise_moments(law: str, scale: float) -> tuple[float, float]:
    """(E|N|, Var N) of a noise law of ``bench/peers/protocol.py`` with Laplace scale b, exactly.

    With q = exp(−1/b): the two-sided geometric has E|N| = 2q/(1 − q²) and Var N = 2q/(1 − q)²; the
    continuous Laplace b and 2b²; the continuous Laplace rounded towards zero, which adds ⌊N⌋ to a positive
    true count (P(⌊N⌋ = k) = (1 − q)q^k/2 for k ≥ 0 and (1 − q)q^(−k−1)/2 for k < 0), has E⌊N⌋ = −1/2,
    E|⌊N⌋| = (1 + q)/(2(1 − q)) and E⌊N⌋² = (1 + q)²/(2(1 − q)²).
    """
    q = math.exp(-1.0 / scale)
    if law == "integer laplace":
        return 2 * q / (1 - q * q), 2 * q / (1 - q) ** 2
    if law == "laplace":
        return scale, 2 * scale**2
    if law == "laplace, then int()":
        return (1 + q) / (2 * (1 - q)), (1 + q) ** 2 / (2 * (1 - q) ** 2) - 0.25
    raise ValueError(f"unknown noise law {law!r}")


def score(tool: str, query: str, answer: dict, wall: float, peak: float, truth: list[Expectation]) -> Result:
    noise_abs, noise_var = noise_moments(answer["noise"]["law"], answer["noise"]["scale"])
    per_panel, z = [], []
    for releases, expected in zip(answer["answers"], truth, strict=True):
        values = np.asarray(releases, dtype=float)  # releases × cells
        error = np.abs(values - expected.mean[query])
        if np.isnan(error).any():
            raise Unavailable(f"{tool} left out a cell of the {query}: {releases[0]}")
        per_panel.append(error.mean())
        z.append(error / np.sqrt(expected.var[query] + noise_var))
    mae = float(np.mean(per_panel))
    se = float(np.std(per_panel, ddof=1) / math.sqrt(len(per_panel))) if len(per_panel) > 1 else math.nan
    mean_cell = float(np.mean([np.mean(e.mean[query]) for e in truth]))
    return Result(
        tool=tool,
        query=query,
        release_seconds=float(np.median(answer["seconds"])),
        load_seconds=float(np.mean(answer["load_seconds"])),
        process_seconds=wall,
        peak_mb=peak,
        mae=mae,
        mae_se=se,
        relative=mae / mean_cell,
        mean_abs_z=float(np.mean(np.concatenate([a.ravel() for a in z]))) if query != "count" else math.nan,
        noise_mean_abs=noise_abs,
        noise=answer["noise"]["text"],
        version=answer["version"],
    )


def dpdash_version() -> str:
    with open(ROOT / "pyproject.toml", "rb") as project:
        version = tomllib.load(project)["project"]["version"]
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return f"dpdash {version} ({commit.stdout.strip() or 'no git'})"


def _figure(value: float) -> str:
    """A value to 3 significant digits, in plain notation up to 10⁷."""
    if not math.isfinite(value):
        return "–"
    if value == 0 or 1e-3 <= abs(value) < 1e7:
        digits = max(0, 2 - math.floor(math.log10(abs(value)))) if value else 0
        return f"{value:,.{digits}f}"
    return f"{value:.2e}"


def table(results: list[Result]) -> str:
    """The results as a Markdown table, then dpdash's ratios to the best peer per query."""
    lines = [
        "| query | tool | release s | load s | peak MB | error: MAE per cell ± SE | relative | mean abs z "
        "| E abs noise |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for query in QUERIES:
        for r in (r for r in results if r.query == query):
            z = f"{r.mean_abs_z:.2f}" if math.isfinite(r.mean_abs_z) else "–"
            lines.append(
                f"| {query} | {r.tool} | {_figure(r.release_seconds)} | {_figure(r.load_seconds)} | "
                f"{r.peak_mb:,.0f} | {_figure(r.mae)} ± {_figure(r.mae_se)} | {r.relative:.2e} | {z} | "
                f"{_figure(r.noise_mean_abs)} |"
            )
    lines += [
        "",
        "| query | dpdash error ÷ best peer's | dpdash E abs noise ÷ least peer's "
        "| dpdash time ÷ fastest peer's |",
        "|---|---:|---:|---:|",
    ]
    for query, tool in itertools.product(QUERIES, ("dpdash", WEIGHTED)):
        ours = next((r for r in results if r.query == query and r.tool == tool), None)
        peers = [r for r in results if r.query == query and not r.tool.startswith("dpdash")]
        if ours is None or not peers:
            continue
        best = min(peers, key=lambda r: r.mae)
        quietest = min(peers, key=lambda r: r.noise_mean_abs)
        fastest = min(peers, key=lambda r: r.release_seconds)
        lines.append(
            f"| {query} ({tool}) | {ours.mae / best.mae:.2f} ({best.tool}) | "
            f"{ours.noise_mean_abs / quietest.noise_mean_abs:.3f} ({quietest.tool}) | "
            f"{ours.release_seconds / fastest.release_seconds:.2f} ({fastest.tool}) |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=1e6, help="rows per panel (about)")
    parser.add_argument("--panels", type=int, default=20, help="panels (seeds 24, 25, …)")
    parser.add_argument("--repeats", type=int, default=1, help="releases per panel, tool and query")
    parser.add_argument("--peers", nargs="*", default=[p.key for p in PEERS], choices=[p.key for p in PEERS])
    parser.add_argument("--queries", nargs="*", default=list(QUERIES), choices=QUERIES)
    parser.add_argument("--venvs", type=Path, default=Path.home() / ".cache" / "dpdash-bench")
    parser.add_argument("--dir", type=Path, default=None, help="scratch folder for the panels (kept)")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per worker process")
    args = parser.parse_args()
    rows = int(args.rows)
    started = time.perf_counter()
    scratch = args.dir or Path(tempfile.mkdtemp(prefix="dpdash-bench-peers-"))
    scratch.mkdir(parents=True, exist_ok=True)
    args.venvs.mkdir(parents=True, exist_ok=True)

    print(f"writing {args.panels} panels of about {rows:,} rows to {scratch}", flush=True)
    paths, truth, largest = write_panels(rows, args.panels, scratch)
    spec_base = {
        "files": [str(p) for p in paths],
        "repeats": args.repeats,
        "epsilon": EPSILON,
        "rows_per_person": C,
        "categories": list(CATEGORIES),
        "bounds": list(WAGE_BOUNDS),
        "max_rows": 2 * max(rows, largest),
        "scratch": str(scratch),
    }
    ours = WORKERS / "dpdash_worker.py"
    tools: list[tuple[str, Path, Path, dict[str, Any]]] = [
        ("dpdash", Path(sys.executable), ours, {}),
        (WEIGHTED, Path(sys.executable), ours, {"bounding": "weight"}),
    ]
    failures: list[str] = []
    for peer in (p for p in PEERS if p.key in args.peers):
        try:
            tools.append((peer.label, ensure_venv(peer, args.venvs), peer.worker, {}))
        except Unavailable as why:
            failures.append(f"{peer.label} {peer.version}: not installed: {why}")
            print(f"  {failures[-1]}", flush=True)

    results: list[Result] = []
    for query in args.queries:
        for label, python, worker, extra in tools:
            spec = {**spec_base, **extra, "query": query}
            try:
                answer, wall, peak = run_worker(python, worker, spec, args.timeout)
                result = score(label, query, answer, wall, peak, truth)
            except Unavailable as why:
                failures.append(f"{label} on the {query}: {why}")
                print(f"  {failures[-1]}", flush=True)
                continue
            results.append(result)
            print(
                f"  {query:9} {label:16} release {result.release_seconds:7.3f} s  peak {peak:6.0f} MB  "
                f"MAE {result.mae:10.3f}  mean|z| {result.mean_abs_z:5.2f}  ({wall:.0f} s in all)",
                flush=True,
            )

    releases = args.panels * args.repeats
    print(
        f"\n{rows:,} rows per panel (largest {largest:,}), {args.panels} panels × {args.repeats} releases = "
        f"{releases} releases per tool and query; ε = {EPSILON:g} (pure), c = {C} rows per person, "
        f"sum of wage clamped to {WAGE_BOUNDS}; mean |z| of an unbiased fair tool: {FAIR_MEAN_ABS_Z:.2f}\n"
    )
    print(table(results))
    print("\nversions and noise, as each tool states it:")
    versions = {r.tool: (dpdash_version() if r.tool.startswith("dpdash") else r.version) for r in results}
    for tool, version in versions.items():
        print(f"- {tool}: {version}")
        for r in (r for r in results if r.tool == tool):
            print(f"    {r.query}: {r.noise}")
    if failures:
        print("\nnot measured:")
        for failure in failures:
            print(f"- {failure}")
    print(f"\nbench took {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
