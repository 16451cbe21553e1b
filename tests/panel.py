"""A person-level panel where people repeat a favourite category, and the exact expectation of what a
uniform choice of c rows per person keeps (MATH.md: truncation must choose each person's rows fairly).

Each person has 1–10 rows (uniform), a favourite of 8 categories (skewed shares) that each row takes with
probability 0.7 (else a uniform category), and a wage level of their own around which each row's value
varies. The expectation of a uniform choice of c of a person's n rows: a cell holding m of them keeps
c·m/n on average, with the hypergeometric variance c·(m/n)(1 − m/n)(n − c)/(n − 1); a sum of the rows
keeps c/n of the person's total, with variance c·s²·(n − c)/(n − 1), s² the population variance of the
person's values (sampling without replacement). People are independent, so the totals add.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

CATEGORIES = ("manufacturing", "retail", "health", "education", "finance", "farming", "transport", "arts")
SHARES = np.array([0.3, 0.2, 0.15, 0.1, 0.1, 0.07, 0.05, 0.03])
WAGE_BOUNDS = (0.0, 200.0)
ID_KINDS = ("small", "int64", "string")


def panel(rows: int, ids: str, seed: int = 24) -> pd.DataFrame:
    """About ``rows`` rows of (pid, industry, wage); ``ids``: "small" (0, 1, …), "int64" (uniform over
    the whole signed 64-bit range, both ends included) or "string" (hex text)."""
    rng = np.random.default_rng(seed)
    people = int(rows / 5.5)
    n = rng.integers(1, 11, people)
    favourite = rng.choice(len(CATEGORIES), people, p=SHARES)
    level = rng.gamma(4.0, 15.0, people)
    person = np.repeat(np.arange(people), n)
    industry = np.where(
        rng.random(person.size) < 0.7, favourite[person], rng.integers(0, len(CATEGORIES), person.size)
    )
    wage = np.round(level[person] * rng.lognormal(0.0, 0.3, person.size), 2)
    if ids == "small":
        pid: np.ndarray = person.astype(np.int64)
    elif ids == "int64":
        codes = rng.integers(
            np.iinfo(np.int64).min, np.iinfo(np.int64).max, people, dtype=np.int64, endpoint=True
        )
        codes[:2] = [np.iinfo(np.int64).min, np.iinfo(np.int64).max]
        codes = np.unique(codes)  # distinct people (a clash among 2·10⁵ draws of 2⁶⁴ is next to impossible)
        assert codes.size == people
        pid = rng.permutation(codes)[person]
    else:
        pid = np.array([f"{rng.integers(2**62):016x}-{i}" for i in range(people)], dtype=object)[person]
    order = rng.permutation(person.size)  # a file's row order is not the people's order
    frame = pd.DataFrame(
        {"pid": pid, "industry": np.asarray(CATEGORIES, dtype=object)[industry], "wage": wage}
    )
    return frame.iloc[order].reset_index(drop=True)


def expected_histogram(df: pd.DataFrame, c: int) -> tuple[pd.Series, pd.Series]:
    """(mean, variance) of each category's kept rows under a uniform choice of c rows per person."""
    counts = df.groupby(["pid", "industry"]).size().rename("m").reset_index()
    n = counts.groupby("pid")["m"].transform("sum").to_numpy(float)
    m = counts["m"].to_numpy(float)
    take = np.minimum(n, c)
    share = m / n
    mean = take * share
    var = np.where(n > c, c * share * (1 - share) * (n - c) / np.maximum(n - 1, 1), 0.0)
    frame = pd.DataFrame({"industry": counts["industry"], "mean": mean, "var": var})
    totals = frame.groupby("industry")[["mean", "var"]].sum()
    return totals["mean"], totals["var"]


def expected_sum(df: pd.DataFrame, c: int, bounds: tuple[float, float] = WAGE_BOUNDS) -> tuple[float, float]:
    """(mean, variance) of the clamped sum of the kept rows under a uniform choice of c rows per person."""
    values = df["wage"].clip(*bounds)
    grouped = values.groupby(df["pid"])
    n = grouped.size().to_numpy(float)
    total = grouped.sum().to_numpy(float)
    s2 = grouped.var(ddof=0).fillna(0.0).to_numpy(float)
    mean = np.minimum(n, c) / n * total
    var = np.where(n > c, c * s2 * (n - c) / np.maximum(n - 1, 1), 0.0)
    return float(mean.sum()), float(var.sum())


def check_histogram(
    observed: np.ndarray, df: pd.DataFrame, c: int, categories: tuple[str, ...] = CATEGORIES
) -> None:
    """Every cell of a truncated histogram within 4 standard deviations of the uniform-choice expectation,
    and a total-variation distance ≤ 0.004 from it (issue 24's tolerance; at 10⁶ rows sampling alone
    gives about 0.001–0.002)."""
    mean, var = expected_histogram(df, c)
    mean, var = mean.reindex(list(categories)).to_numpy(), var.reindex(list(categories)).to_numpy()
    observed = np.asarray(observed, dtype=float)[: len(categories)]
    z = (observed - mean) / np.sqrt(var)
    tvd = 0.5 * np.abs(observed / observed.sum() - mean / mean.sum()).sum()
    detail = {
        k: (int(o), round(float(m), 1), round(float(s), 2))
        for k, o, m, s in zip(categories, observed, mean, z, strict=True)
    }
    assert np.abs(z).max() <= 4.0, f"a cell is {np.abs(z).max():.1f} sd from the expectation: {detail}"
    assert tvd <= 0.004, f"total-variation distance {tvd:.4f} > 0.004: {detail}"


def check_uniform_choice(data: Any, df: pd.DataFrame) -> None:
    """A histogram of ``industry`` truncated to c = 1 row per person and a sum of ``wage`` truncated to
    c = 2, computed on ``data`` (a DataFrame or any engine's Source of ``df``), each held against the
    uniform-choice expectation; under weighted bounding, each equal to it."""
    from dpdash.engines import evaluate
    from dpdash.facts import Facts
    from dpdash.queries import Histogram, Sum

    one, two = Facts(rows_per_person=1, id_column="pid"), Facts(rows_per_person=2, id_column="pid")
    histogram = evaluate(Histogram(column="industry", categories=CATEGORIES, facts=one), data)
    check_histogram(histogram.values, df, 1)
    total = evaluate(Sum(column="wage", bounds=WAGE_BOUNDS, facts=two), data)
    check_sum(float(total.values[0]), df, 2)
    # Weighted bounding answers the expectation itself: equal up to the rounding of the sums.
    one, two = (Facts(rows_per_person=c, id_column="pid", bounding="weight") for c in (1, 2))
    histogram = evaluate(Histogram(column="industry", categories=CATEGORIES, facts=one), data)
    mean, _ = expected_histogram(df, 1)
    np.testing.assert_allclose(histogram.values[: len(CATEGORIES)], mean.reindex(list(CATEGORIES)), rtol=1e-9)
    total = evaluate(Sum(column="wage", bounds=WAGE_BOUNDS, facts=two), data)
    np.testing.assert_allclose(float(total.values[0]), expected_sum(df, 2)[0], rtol=1e-9)


def check_sum(observed: float, df: pd.DataFrame, c: int) -> None:
    """A truncated clamped sum within 4 standard deviations of the uniform-choice expectation."""
    mean, var = expected_sum(df, c)
    z = (observed - mean) / np.sqrt(var)
    assert abs(z) <= 4.0, f"sum {observed:.1f} against {mean:.1f} expected: {z:.1f} sd"
