"""The second-moment matrix Σ x xᵀ of numeric columns, for covariance and PCA."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import numpy.typing as npt
import pandas as pd

from dpdash import _validation as check
from dpdash.errors import ParameterError
from dpdash.facts import MAX_GROUPS, Facts, Truncation
from dpdash.queries import base

__all__ = ["SecondMoment"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SecondMoment(base.NumericQuery):
    """A = Σ_i x_i x_iᵀ over the rows x_i of ``columns`` (d of them), each row scaled into the ℓ2 ball
    of radius B = ``norm_bound`` (x ↦ x·min(1, B/‖x‖₂)); rows with a missing value are dropped and
    counted. The answer is the upper triangle of A, row by row (d(d+1)/2 numbers; ``matrix`` rebuilds
    A); add noise with the Gaussian mechanism and post-process with ``"project_psd"`` for a positive
    semidefinite estimate.

    One row contributes v = upper(x xᵀ) with ‖x‖₂ ≤ B, or 0. Since ‖x‖⁴ = Σx_i⁴ + 2Σ_(i<j) x_i²x_j²,
    ‖v‖₂ ≤ ‖x‖² ≤ B² (equal for x = B·e₁); ‖v‖₁ = (‖x‖₁² + ‖x‖₂²)/2 ≤ (d + 1)B²/2 (equal when all
    |x_i| = B/√d); one entry moves by at most B². Hence, with c rows per person:

    - add/remove: ℓ2 c·B², ℓ1 c·(d + 1)B²/2, per entry c·B²;
    - substitute: ℓ2 c·√2·B² for d ≥ 2 (‖xxᵀ − yyᵀ‖_F² = ‖x‖⁴ + ‖y‖⁴ − 2(xᵀy)² ≤ 2B⁴, reached at
      x = B·e₁, y = B·e₂), c·B² for d = 1; per entry c·B²; ℓ1: the upper bound c·(d + 1)B² (triangle
      inequality), which is not tight for d ≥ 2 (``l1_exact`` says so).

    >>> import pandas as pd
    >>> q = SecondMoment(columns=("x", "y"), norm_bound=1.0)
    >>> q.labels, q.l2_sensitivity
    (('x·x', 'x·y', 'y·y'), 1.0)
    >>> q.true_answer(pd.DataFrame({"x": [0.6, 3.0], "y": [0.8, 4.0]})).round(6).tolist()
    [0.72, 0.96, 1.28]
    """

    kind: ClassVar[str] = "second_moment"

    columns: tuple[str, ...]
    norm_bound: float = 1.0
    facts: Facts = field(default_factory=Facts)

    def __post_init__(self) -> None:
        object.__setattr__(self, "facts", base.as_facts(self.facts))
        if isinstance(self.columns, str) or not self.columns:
            raise ParameterError(f"columns must be a list of column names, got columns={self.columns!r}")
        columns = tuple(base.column_name(c, "columns") for c in self.columns)
        if len(set(columns)) != len(columns):
            raise ParameterError(f"columns must be distinct, got columns={self.columns!r}")
        d = len(columns)
        if d * (d + 1) // 2 > MAX_GROUPS:
            raise ParameterError(
                f"a second-moment matrix of {d} columns has too many entries (> {MAX_GROUPS})"
            )
        object.__setattr__(self, "columns", columns)
        object.__setattr__(self, "norm_bound", check.positive_finite(self.norm_bound, "norm_bound"))

    @property
    def name(self) -> str:
        return "second-moment matrix of " + ", ".join(self.columns)

    @property
    def size(self) -> int:
        """d, the number of columns."""
        return len(self.columns)

    @property
    def labels(self) -> tuple[str, ...]:
        c = self.columns
        return tuple(f"{c[i]}·{c[j]}" for i in range(len(c)) for j in range(i, len(c)))

    def required_columns(self) -> tuple[str, ...]:
        return self.columns

    def _check_types(self, df: pd.DataFrame) -> None:
        for column in self.columns:
            base.require_numeric(df, column, self)

    @property
    def l1_exact(self) -> bool:
        """Whether ``l1_sensitivity`` is exact (else a valid upper bound)."""
        return not self.facts.substitute or self.size == 1

    @property
    def sensitivities(self) -> base.Sensitivities:
        c, b2, d = self.facts.rows_per_person, self.norm_bound**2, self.size
        entries = d * (d + 1) // 2
        if not self.facts.substitute:
            return base.Sensitivities(c * (d + 1) * b2 / 2.0, c * b2, c * b2, entries)
        if d == 1:
            return base.Sensitivities(c * b2, c * b2, c * b2, 1)
        return base.Sensitivities(c * (d + 1) * b2, c * math.sqrt(2.0) * b2, c * b2, entries)

    def matrix(self, values: npt.ArrayLike) -> np.ndarray:
        """The symmetric d×d matrix from its upper triangle (row by row)."""
        d = self.size
        upper = np.asarray(values, dtype=float)
        if upper.shape != (d * (d + 1) // 2,):
            raise ParameterError(
                f"values must hold the {d * (d + 1) // 2} upper-triangle entries, got {upper.shape}"
            )
        out = np.zeros((d, d))
        out[np.triu_indices(d)] = upper
        return out + np.triu(out, 1).T

    def rows(self, df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, int]:
        """(clipped rows, unclipped rows, rows with a missing value) after truncation. NOT PRIVATE.

        A row is scaled to ‖x‖₂ = B when longer. A row with m infinite entries goes where scaling takes it
        in the limit: B·sign(xᵢ)/√m on each infinite entry, 0 elsewhere (x·B/‖x‖ would be ∞·0 = NaN)."""
        frame = df[list(self.columns)]
        missing = frame.isna().any(axis=1).to_numpy()
        x = frame[~missing].to_numpy(dtype=float)
        infinite = np.isinf(x)
        norms = np.sqrt((x * x).sum(axis=1))
        with np.errstate(divide="ignore", invalid="ignore"):
            factor = np.where(norms > self.norm_bound, self.norm_bound / norms, 1.0)
            clipped = x * factor[:, None]
        rows = infinite.any(axis=1)
        if rows.any():
            m = infinite[rows].sum(axis=1, keepdims=True)
            clipped[rows] = np.where(infinite[rows], np.sign(x[rows]) * self.norm_bound / np.sqrt(m), 0.0)
        return clipped, x, int(missing.sum())

    def _evaluate(self, df: pd.DataFrame, truncation: Truncation) -> base.Evaluation:
        clipped, raw, missing = self.rows(df)
        iu = np.triu_indices(self.size)
        values = (clipped.T @ clipped)[iu]
        norms = np.sqrt((raw * raw).sum(axis=1))
        scaled = norms > self.norm_bound
        # Only the rows scaled down move the answer: Σ over them of (x'x'ᵀ − xxᵀ), exactly 0 when none.
        with np.errstate(invalid="ignore", over="ignore"):
            moved = (clipped[scaled].T @ clipped[scaled] - raw[scaled].T @ raw[scaled])[iu]
        bias = tuple(float(v) for v in moved) if scaled.any() else (0.0,) * len(iu[0])
        report = base.DataReport(
            rows=truncation.rows_in,
            rows_used=int(clipped.shape[0]),
            truncation=truncation,
            missing=missing,
            clipped_above=int(scaled.sum()),
            clipping_bias=bias,
            notes=("clipped_above counts rows scaled down to the norm bound",),
        )
        return base.Evaluation(values, report)
