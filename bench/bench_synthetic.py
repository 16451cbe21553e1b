"""Benchmark: a private synthetic table (MST) of a UCI-Adult-sized table, its time and its quality.

Run from the repository root with an environment that has ``mbi`` (requirements.txt):
``.venv/bin/python bench/bench_synthetic.py`` (``--rows-large N`` to change the engine case,
``--rows-large 0`` to skip it, ``--no-smartnoise`` to skip the peer, ``--repeats N`` for N draws of each).

Measured, at ε = 1, δ = 1e-6 (ρ ≈ 0.0244-zCDP):

1. a release (exact samplers on OS randomness) of a 50 000-row, 14-column table generated here with
   Adult's columns and plausible dependencies (nothing downloaded), numeric columns in 16 bins of their
   declared bounds; target ≤ 60 s on 2 cores;
2. its quality against the true table (``dpdash.synthetic.quality``, NOT PRIVATE): average one-way TVD
   (target ≤ 0.02) and two-way TVD over the measured pairs (target ≤ 0.05);
3. 10⁷ rows of the same table as a folder of Parquet files, through DuckDB (``open_files``): every marginal
   a group-by in the engine; target ≤ 3 min, the marginals' share of the time printed;
4. AIM (``method="aim"``) on the same 50 000 rows for a workload of 7 pairs (``WORKLOAD``): a release's
   time (target ≤ 60 s), its rounds, and the workload pairs' average TVD beside MST's on the same pairs;
5. beside SmartNoise Synth's MST (``smartnoise-synth`` from PyPI, installed by this script in a venv of its
   own under the system temp folder) at the same budget on the same 50 000 rows, twice per dpdash draw
   (``PEER_DOMAINS``): given every declared cell (the same cells as dpdash: the target, dpdash no worse)
   and with its default of reading each column's categories off the data; time and TVDs, and the ratios
   dpdash/SmartNoise, each repeat's and their mean ± sd over ``--repeats`` draws of both (the release draws
   on OS randomness; one draw is within its noise of either side). If it cannot be installed, the script
   says so and goes on.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import argparse
import json
import subprocess
import tempfile
import textwrap
import time
from typing import Any

import numpy as np
import pandas as pd

from dpdash.datasets import PublicFacts
from dpdash.synthetic import quality, synthesize

EPSILON, DELTA = 1.0, 1e-6

WORK = ["Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov", "State-gov",
        "Without-pay", "Never-worked"]  # fmt: skip
EDUCATION = ["Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th", "HS-grad",
             "Some-college", "Assoc-voc", "Assoc-acdm", "Bachelors", "Masters", "Prof-school",
             "Doctorate"]  # fmt: skip
MARITAL = ["Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed", "Married-spouse-absent",
           "Married-AF-spouse"]  # fmt: skip
OCCUPATION = ["Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial", "Prof-specialty",
              "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical", "Farming-fishing", "Transport-moving",
              "Priv-house-serv", "Protective-serv", "Armed-Forces"]  # fmt: skip
RELATIONSHIP = ["Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried"]
RACE = ["White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"]
COUNTRY = ["United-States", "Mexico", "Philippines", "Germany", "Canada", "India", "China", "Cuba",
           "England", "Other"]  # fmt: skip

FACTS = PublicFacts(
    bounds={"age": (17, 90), "fnlwgt": (10_000, 1_500_000), "education_num": (1, 16),
            "capital_gain": (0, 100_000), "capital_loss": (0, 5_000), "hours_per_week": (1, 99)},
    categories={"workclass": WORK, "education": EDUCATION, "marital_status": MARITAL,
                "occupation": OCCUPATION, "relationship": RELATIONSHIP, "race": RACE,
                "sex": ["Female", "Male"],
                "native_country": COUNTRY, "income": ["<=50K", ">50K"]},
)  # fmt: skip


def adult_like(rows: int, seed: int) -> pd.DataFrame:
    """A table with Adult's 14 columns and dependencies like its own (age → marital status, education →
    years and occupation, sex and marriage → relationship, income from education, age, hours and sex)."""
    rng = np.random.default_rng(seed)
    age = np.clip(rng.gamma(6.0, 6.5, rows) + 17, 17, 90).round()
    sex = rng.choice(2, rows, p=[0.33, 0.67])
    edu = rng.choice(16, rows, p=np.array([1, 2, 4, 8, 6, 12, 14, 5, 130, 90, 17, 13, 66, 21, 7, 5]) / 401)
    married = rng.random(rows) < np.clip((age - 18) / 30, 0.05, 0.6)
    others = rng.choice([1, 2, 3, 4, 5, 6], rows, p=[0.3, 0.55, 0.06, 0.06, 0.02, 0.01])
    marital = np.where(married, 0, others)
    marital = np.where((marital != 0) & (age < 25), 2, marital)
    relationship = np.where(marital == 0, np.where(sex == 1, 2, 0),
                            rng.choice([1, 3, 4, 5], rows, p=[0.3, 0.45, 0.05, 0.2]))  # fmt: skip
    white_collar = rng.random(rows) < np.clip((edu - 6) / 12, 0.02, 0.9)
    occupation = np.where(white_collar, rng.choice([0, 3, 4, 5, 8], rows),
                          rng.choice([1, 2, 6, 7, 9, 10, 11, 12, 13], rows))  # fmt: skip
    work = rng.choice(8, rows, p=[0.74, 0.08, 0.035, 0.03, 0.065, 0.04, 0.005, 0.005])
    hours = np.clip(rng.normal(np.where(sex == 1, 43, 37), 11), 1, 99).round()
    logit = -9.0 + 0.35 * edu + 0.04 * np.minimum(age, 60) + 0.03 * hours + 0.9 * sex + 1.1 * (marital == 0)
    income = rng.random(rows) < 1 / (1 + np.exp(-logit))
    gain = np.where(rng.random(rows) < np.where(income, 0.2, 0.04), rng.lognormal(8.5, 1.0, rows), 0).round()
    loss = np.where(rng.random(rows) < 0.05, rng.normal(1900, 300, rows), 0).round()
    return pd.DataFrame({
        "age": age, "workclass": np.array(WORK)[work], "fnlwgt": rng.lognormal(12.0, 0.5, rows).round(),
        "education": np.array(EDUCATION)[edu], "education_num": (edu + 1).astype(float),
        "marital_status": np.array(MARITAL)[marital], "occupation": np.array(OCCUPATION)[occupation],
        "relationship": np.array(RELATIONSHIP)[relationship],
        "race": np.array(RACE)[rng.choice(5, rows, p=[0.85, 0.03, 0.01, 0.01, 0.10])],
        "sex": np.array(["Female", "Male"])[sex], "capital_gain": gain, "capital_loss": loss,
        "hours_per_week": hours,
        "native_country": np.array(COUNTRY)[rng.choice(10, rows, p=[0.9, 0.02, 0.01, 0.01, 0.01, 0.01, 0.01,
                                                                     0.01, 0.01, 0.01])],
        "income": np.where(income, ">50K", "<=50K"),
    })  # fmt: skip


def release_case(df: pd.DataFrame) -> dict[str, Any]:
    start = time.perf_counter()
    s = synthesize(df, FACTS, epsilon=EPSILON, delta=DELTA)
    seconds = time.perf_counter() - start
    q = quality(df, s)
    return {"seconds": seconds, "marginals": s.seconds["marginals"], "one_way": q.mean_one_way,
            "workload": workload_tvd(df, s.table, WORKLOAD),
            "two_way": q.mean_two_way, "pairs": sorted(q.two_way), "rows": len(s.table),
            "association": float(np.nanmax(np.abs(q.association_difference.to_numpy())))}  # fmt: skip


#: AIM's workload: pairs an analyst of Adult would ask about.
WORKLOAD = [("age", "marital_status"), ("education", "education_num"), ("education", "occupation"),
            ("sex", "relationship"), ("education", "income"), ("hours_per_week", "income"), ("age", "income")]


def workload_tvd(df: pd.DataFrame, synthetic: pd.DataFrame, pairs: list[tuple[str, str]]) -> float:
    """The average TVD of ``pairs`` between the true table and a synthetic one, on the same cells."""
    from dpdash.synthetic import build_domain
    from dpdash.synthetic.quality import tvd

    domain = build_domain(FACTS, list(df.columns))
    true, fake = domain.codes(df).clip(lower=0), domain.codes(synthetic).clip(lower=0)

    def joint(frame: pd.DataFrame, pair: tuple[str, str]) -> np.ndarray:
        a, b = (domain.column(c).size for c in pair)
        return np.bincount(frame[pair[0]].to_numpy() * b + frame[pair[1]].to_numpy(), minlength=a * b)

    return float(np.mean([tvd(joint(true, p), joint(fake, p)) for p in pairs]))


def aim_case(df: pd.DataFrame) -> dict[str, Any]:
    start = time.perf_counter()
    s = synthesize(df, FACTS, epsilon=EPSILON, delta=DELTA, method="aim", workload=WORKLOAD)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "rounds": len(s.selections), "table": s.table,
            "workload": workload_tvd(df, s.table, WORKLOAD)}  # fmt: skip


def large_case(rows: int, folder: Path) -> dict[str, Any]:
    from dpdash.engines import open_files

    chunk = 1_000_000
    for i, first in enumerate(range(0, rows, chunk)):
        adult_like(min(chunk, rows - first), seed=100 + i).to_parquet(folder / f"part-{i:03d}.parquet")
    source = open_files(folder)
    start = time.perf_counter()
    s = synthesize(source, FACTS, epsilon=EPSILON, delta=DELTA)
    seconds = time.perf_counter() - start
    return {"rows": rows, "seconds": seconds, "marginals": s.seconds["marginals"]}


SMARTNOISE = textwrap.dedent("""
    import json, sys, time
    import pandas as pd
    from snsynth import Synthesizer
    from snsynth.transform import LabelTransformer, TableTransformer
    df = pd.read_csv(sys.argv[1], dtype=str)
    sizes = json.loads(sys.argv[2])
    start = time.perf_counter()
    synth = Synthesizer.create("mst", epsilon=float(sys.argv[3]), delta=float(sys.argv[4]))
    if sizes:  # every declared cell, present in the data or not: a transformer fitted to all the codes
        longest = max(sizes.values())
        cells = pd.DataFrame({c: [str(i % sizes[c]) for i in range(longest)] for c in df.columns})
        transformer = TableTransformer([LabelTransformer(nullable=False) for _ in df.columns])
        transformer.fit(cells)
        synth.fit(df, transformer=transformer)
    else:  # SmartNoise's default: each column's categories read off the values present in the data
        synth.fit(df, categorical_columns=list(df.columns), preprocessor_eps=0.0)
    out = synth.sample(len(df))
    print(json.dumps({"seconds": time.perf_counter() - start}))
    out.to_csv(sys.argv[5], index=False)
""")


def smartnoise_case(
    binned: pd.DataFrame, scratch: Path, venv: Path, sizes: dict[str, int] | None = None
) -> dict[str, Any] | str:
    """SmartNoise Synth's MST on the same rows, each column given as the same cells dpdash uses (so its
    domain needs no budget: ``preprocessor_eps=0``), in the venv ``venv`` (created when missing)."""
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    probe = subprocess.run([str(python), "-c", "import snsynth"], capture_output=True)
    if probe.returncode != 0:
        install = subprocess.run([str(python), "-m", "pip", "install", "-q", "smartnoise-synth"],
                                 capture_output=True, text=True)  # fmt: skip
        if install.returncode != 0:
            return "could not install smartnoise-synth: " + install.stderr.strip().splitlines()[-1][:200]
    data, out, script = scratch / "in.csv", scratch / "out.csv", scratch / "sn.py"
    binned.to_csv(data, index=False)
    script.write_text(SMARTNOISE)
    run = subprocess.run([str(python), str(script), str(data), json.dumps(sizes or {}), str(EPSILON),
                          str(DELTA), str(out)], capture_output=True, text=True)  # fmt: skip
    if run.returncode != 0:
        return "SmartNoise Synth failed: " + run.stderr.strip().splitlines()[-1][:300]
    seconds = json.loads(run.stdout.strip().splitlines()[-1])["seconds"]
    return {"seconds": seconds, "table": pd.read_csv(out)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--rows-large", type=int, default=10_000_000)
    parser.add_argument("--no-smartnoise", action="store_true")
    parser.add_argument("--repeats", type=int, default=3, help="draws of each side for the TVD ratios")
    parser.add_argument("--smartnoise-venv", type=Path,
                        default=Path(tempfile.gettempdir()) / "dpdash-bench-smartnoise")  # fmt: skip
    args = parser.parse_args()
    df = adult_like(args.rows, seed=7)
    print(f"UCI-Adult-like table: {len(df):,} rows, {df.shape[1]} columns; ε = {EPSILON:g}, δ = {DELTA:g}")
    small = release_case(df)
    print(f"  release: {small['seconds']:.1f} s (target ≤ 60 s), marginals {small['marginals']:.1f} s; "
          f"{small['rows']:,} rows drawn")  # fmt: skip
    print(f"  average one-way TVD {small['one_way']:.4f} (target ≤ 0.02); two-way TVD over the "
          f"{len(small['pairs'])} measured pairs {small['two_way']:.4f} (target ≤ 0.05); largest association "
          f"difference {small['association']:.3f}")  # fmt: skip
    adaptive = aim_case(df)
    print(f"  AIM release for {len(WORKLOAD)} pairs: {adaptive['seconds']:.1f} s (target ≤ 60 s), "
          f"{adaptive['rounds']} rounds; the pairs' average TVD {adaptive['workload']:.4f} against MST's "
          f"{small['workload']:.4f} (ratio {adaptive['workload'] / small['workload']:.2f})")  # fmt: skip
    if not args.no_smartnoise:
        ours = [small] + [release_case(df) for _ in range(max(1, args.repeats) - 1)]
        _peer(df, ours, args.smartnoise_venv)
    if args.rows_large <= 0:
        return
    with tempfile.TemporaryDirectory() as folder:
        large = large_case(args.rows_large, Path(folder))
    share = large["marginals"] / large["seconds"]
    print(f"{large['rows']:,} rows through DuckDB (Parquet folder): {large['seconds']:.1f} s "
          "(target ≤ 180 s); "
          f"marginals in the engine {large['marginals']:.1f} s ({share:.0%} of it)")  # fmt: skip


#: The two ways SmartNoise is given the table's cells: every declared cell (dpdash's domain, the same
#: cells), or its default of reading each column's categories off the values present in the data (which uses
#: the data outside its budget: an empty declared cell, such as every column's "(other)" here, disappears).
PEER_DOMAINS = {"declared": "every declared cell", "data": "categories read off the data"}


def _peer(df: pd.DataFrame, ours: list[dict[str, Any]], venv: Path) -> None:
    """SmartNoise Synth's MST twice per dpdash draw in ``ours`` (``PEER_DOMAINS``); each pair's ratios, and
    their mean ± sd for each domain."""
    from dpdash.synthetic import build_domain
    from dpdash.synthetic.quality import tvd

    domain = build_domain(FACTS, list(df.columns))
    binned = domain.codes(df).clip(lower=0)
    sizes = {c: domain.column(c).size for c in domain.names}

    def joint(frame: pd.DataFrame, cols: tuple[str, ...]) -> np.ndarray:
        flat = np.ravel_multi_index(tuple(frame[c].to_numpy() for c in cols), [sizes[c] for c in cols])
        return np.bincount(flat, minlength=int(np.prod([sizes[c] for c in cols])))

    ratios: dict[str, list[tuple[float, float, float]]] = {k: [] for k in PEER_DOMAINS}
    for i, mine in enumerate(ours, start=1):
        print(f"  draw {i}: dpdash {mine['seconds']:.1f} s, one-way TVD {mine['one_way']:.4f}, two-way "
              f"{mine['two_way']:.4f}")  # fmt: skip
        for key, label in PEER_DOMAINS.items():
            with tempfile.TemporaryDirectory() as scratch:
                peer = smartnoise_case(binned, Path(scratch), venv, sizes if key == "declared" else None)
            if isinstance(peer, str):
                print(f"  SmartNoise Synth MST: not measured ({peer})")
                return
            table = peer["table"].astype(int)
            one = float(np.mean([tvd(joint(binned, (c,)), joint(table, (c,))) for c in domain.names]))
            two = float(np.mean([tvd(joint(binned, p), joint(table, p)) for p in mine["pairs"]]))
            r = (mine["seconds"] / peer["seconds"], mine["one_way"] / one, mine["two_way"] / two)
            ratios[key].append(r)
            print(f"    SmartNoise Synth MST, {label}: {peer['seconds']:.1f} s, one-way TVD {one:.4f}, "
                  f"two-way TVD over dpdash's pairs {two:.4f}; ratios dpdash/SmartNoise: time {r[0]:.2f}, "
                  f"one-way TVD {r[1]:.2f}, two-way TVD {r[2]:.2f}")  # fmt: skip
    for key, label in PEER_DOMAINS.items():
        r = np.array(ratios[key])
        sd = r.std(axis=0, ddof=1) if len(r) > 1 else np.full(3, np.nan)
        target = " (target ≤ 1: the same cells)" if key == "declared" else ""
        print(f"  ratios dpdash/SmartNoise ({label}) over {len(r)} draws of each (mean ± sd): time "
              f"{r[:, 0].mean():.2f} ± {sd[0]:.2f}, one-way TVD {r[:, 1].mean():.2f} ± {sd[1]:.2f}{target}, "
              f"two-way TVD {r[:, 2].mean():.2f} ± {sd[2]:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
