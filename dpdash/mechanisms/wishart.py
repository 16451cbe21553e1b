"""The Wishart mechanism for second-moment (covariance) matrices (Jiang, Xie & Zhang, "Wishart Mechanism
for Differentially Private Principal Components Analysis", AAAI 2016), with the guarantee it really has.

The mechanism. Rows x_1 … x_n ∈ ℝ^d with ‖x_i‖₂ ≤ 1, A = (1/n)·Σ x_i x_iᵀ; publish Â = A + W with
W ~ Wishart_d(d + 1, C), C = (3/(2nε))·I_d (for ‖x_i‖₂ ≤ B, dpdash scales C by B²). Â is positive
semidefinite (W is positive definite almost surely), which is the mechanism's appeal.

What it guarantees. The paper claims (ε, 0)-DP. That claim is false, and was withdrawn (A. Sarwate,
"Retraction for Symmetric Matrix Perturbation for Differentially-Private PCA, ICASSP 2016", 7 April
2017, which names the AAAI 2016 paper as having "a similar incorrect result"; diffprivlib deprecated
its Wishart mechanism for the same reason). Exactly, with C = c·I: for k = d + 1 degrees of freedom
the Wishart density is ∝ exp(−tr(W)/(2c)) on the positive definite cone, so for neighbours A, A′
(A − A′ = (xxᵀ − x′x′ᵀ)/n):

- where both densities are positive, the privacy loss is the constant tr(A − A′)/(2c), at most
  ε₀ = B²/(2cn) = ε/3 in absolute value;
- but Â − A′ = W + (A − A′) need not be positive definite: with x = 0 and ‖x′‖ = B, it fails exactly
  when vᵀW⁻¹v > 1 for v = x′/√n, and since c·vᵀv/(vᵀW⁻¹v) ~ χ²₂ (Muirhead 1982, Theorem 3.2.12, with
  k − d + 1 = 2), that has probability 1 − exp(−B²/(2cn)) = 1 − e^(−ε/3). On those outputs the loss
  is infinite.

So the privacy profile is δ(ε′) = 1 − e^(−ε/3) for **every** ε′ ≥ 0 (this pair attains it, and no
pair does worse, because W + xxᵀ/n − x′x′ᵀ/n ⪰ W − x′x′ᵀ/n): the mechanism is (0, 1 − e^(−ε/3))-DP
and no better — at the paper's ε = 1, δ = 0.28. ``delta`` and ``privacy_profile`` report this;
``Wishart.for_delta`` calibrates the scale to a target δ instead (ε = −3·ln(1 − δ)), which shows how
much noise an honest guarantee takes. The analysis covers one row per person, under substitution
(the paper's setting) and under add/remove with A normalised by the declared n alike.

``dpdash.release`` refuses this mechanism; for a private positive semidefinite covariance, release
``SecondMoment`` with the Gaussian mechanism and post-process with ``"project_psd"``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from dpdash import _validation as check
from dpdash import sampling
from dpdash.errors import ParameterError

__all__ = ["Wishart"]

#: Rows are rounded to a grid h ≤ B/(GRID_FINENESS·√d) in ``release``.
GRID_FINENESS = 2**12
#: Discrete Gaussian coordinates drawn at once by ``release_trials``.
_BLOCK = 2**22
_LEFT_THE_LATTICE = "the noisy matrix left the exact range of the lattice; nothing was released"


@dataclass(frozen=True, slots=True, kw_only=True)
class Wishart:
    """Â = A + W, W ~ Wishart_d(d + 1, c·I), c = 3B²/(2nε), A = (1/n)Σ x_i x_iᵀ, ‖x_i‖₂ ≤ B (Jiang et
    al. 2016, with their calibration). NOT (ε, 0)-DP: its exact guarantee is (ε′, 1 − e^(−ε/3)) for
    every ε′ ≥ 0 (module docstring); ``epsilon`` is the paper's calibration parameter, not a guarantee.

    Args:
        epsilon: the paper's ε, which fixes the scale c.
        rows: n, the public number of rows A is normalised by.
        dimension: d, the number of columns.
        norm_bound: B, rows are scaled into the ℓ2 ball of radius B (the paper: 1).

    ``release`` is as honest as exact sampling allows (see its docstring): exact integer draws on OS
    randomness and exact arithmetic, an output that is exactly positive semidefinite and lies on a
    data-independent lattice, but the noise is a lattice approximation of the Wishart law, and no
    privacy proof covers it.

    >>> w = Wishart(epsilon=1.0, rows=1000, dimension=3)
    >>> w.scale, w.degrees_of_freedom, round(w.delta, 4)
    (0.0015, 4, 0.2835)
    >>> round(Wishart.for_delta(delta=1e-6, rows=1000, dimension=3).scale, 2)
    500.0
    """

    name: ClassVar[str] = "Wishart"

    epsilon: float
    rows: int
    dimension: int
    norm_bound: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check.epsilon(self.epsilon))
        object.__setattr__(self, "rows", check.positive_int(self.rows, "rows"))
        object.__setattr__(self, "dimension", check.positive_int(self.dimension, "dimension"))
        object.__setattr__(self, "norm_bound", check.sensitivity(self.norm_bound, "norm_bound"))

    @classmethod
    def for_delta(cls, *, delta: float, rows: int, dimension: int, norm_bound: float = 1.0) -> Wishart:
        """The Wishart mechanism whose true guarantee is (0, δ)-DP: ε = −3·ln(1 − δ), so that
        c = B²/(2n·ln(1/(1 − δ)))."""
        d = check.open_unit(delta, "delta")
        return cls(epsilon=-3.0 * math.log1p(-d), rows=rows, dimension=dimension, norm_bound=norm_bound)

    @property
    def scale(self) -> float:
        """c = 3B²/(2nε): W ~ Wishart_d(d + 1, c·I)."""
        return 3.0 * self.norm_bound**2 / (2.0 * self.rows * self.epsilon)

    @property
    def degrees_of_freedom(self) -> int:
        return self.dimension + 1

    @property
    def loss_bound(self) -> float:
        """ε₀ = B²/(2cn) = ε/3: the privacy loss where both neighbours' densities are positive."""
        return self.epsilon / 3.0

    @property
    def delta(self) -> float:
        """δ = 1 − e^(−ε/3): the mechanism is (ε′, δ)-DP for every ε′ ≥ 0, and for no smaller δ."""
        return -math.expm1(-self.loss_bound)

    def privacy_profile(self, epsilons: npt.ArrayLike) -> np.ndarray:
        """δ(ε′) = 1 − e^(−ε/3) for every ε′ ≥ 0 (module docstring)."""
        eps = check.non_negative_array(epsilons, "epsilons")
        return np.full(eps.shape, self.delta)

    @property
    def guarantee(self) -> str:
        return (
            f"(ε′, {self.delta:.4g})-DP for every ε′ ≥ 0, i.e. (0, {self.delta:.4g})-DP; NOT the "
            f"(ε = {self.epsilon:g}, 0)-DP claimed by Jiang et al. 2016 (retracted claim)"
        )

    @property
    def noise_mean(self) -> np.ndarray:
        """E[W] = (d + 1)·c·I: the noise is biased; subtract it for an unbiased (not PSD) estimate."""
        return self.degrees_of_freedom * self.scale * np.eye(self.dimension)

    # ---- the data ---------------------------------------------------------------------------------
    def _rows(self, rows: npt.ArrayLike) -> np.ndarray:
        x = check.numeric_array(rows, "rows").astype(float)
        if x.ndim != 2 or x.shape[1] != self.dimension:
            raise ParameterError(f"rows must be an n × {self.dimension} array, got shape {x.shape}")
        if x.shape[0] != self.rows:
            raise ParameterError(
                f"rows must hold the declared n = {self.rows} rows (the mechanism is calibrated to it), "
                f"got {x.shape[0]}"
            )
        if not np.all(np.isfinite(x)):
            raise ParameterError("rows must be finite numbers (drop or impute missing values first)")
        return x

    def _clip(self, x: np.ndarray, radius: float) -> np.ndarray:
        norms = np.sqrt((x * x).sum(axis=1))
        with np.errstate(divide="ignore", invalid="ignore"):
            factor = np.where(norms > radius, radius / norms, 1.0)
        return x * factor[:, None]

    def true_matrix(self, rows: npt.ArrayLike) -> np.ndarray:
        """A = (1/n)·Σ x_i x_iᵀ with rows scaled into the ball of radius B. NOT PRIVATE."""
        x = self._clip(self._rows(rows), self.norm_bound)
        return x.T @ x / self.rows

    # ---- the random side ------------------------------------------------------------------------------
    def simulate(
        self, matrix: npt.ArrayLike, size: int, rng: np.random.Generator | int | None = None
    ) -> np.ndarray:
        """``size`` possible outputs A + W for a d × d matrix A, with numpy (previews only):
        W = G·Gᵀ, G a d × (d + 1) matrix of N(0, c) entries (the Wishart with integer degrees of freedom)."""
        a = check.numeric_array(matrix, "matrix").astype(float)
        if a.shape != (self.dimension, self.dimension):
            raise ParameterError(f"matrix must be {self.dimension} × {self.dimension}, got shape {a.shape}")
        if not np.all(np.isfinite(a)):
            raise ParameterError("matrix must be finite numbers")
        n = check.draws(size, "size", self.dimension * self.degrees_of_freedom)
        generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        g = generator.normal(0.0, math.sqrt(self.scale), (n, self.dimension, self.degrees_of_freedom))
        return a[None, :, :] + g @ np.swapaxes(g, 1, 2)

    @property
    def grid(self) -> float:
        """h = 2^j ≤ B/(4096·√d): the grid the rows are rounded to in ``release``."""
        target = self.norm_bound / (GRID_FINENESS * math.sqrt(self.dimension))
        _, exponent = math.frexp(target)
        return math.ldexp(1.0, exponent - 1)

    def release(self, rows: npt.ArrayLike) -> np.ndarray:
        """A noisy second-moment matrix from exact draws on OS randomness, on a lattice. Read this first.

        1. Rows are scaled into the ball of radius B − h√d/2 and rounded to the grid h (a power of two),
           ξ_i = round(x_i/h) ∈ ℤ^d, so ‖h·ξ_i‖ ≤ B; A is replaced by g·Σ ξ_i ξ_iᵀ, g = h²/n.
        2. The noise is g·Σ_(j ≤ d+1) ζ_j ζ_jᵀ with ζ_j ∈ ℤ^d of i.i.d. exact discrete Gaussian
           coordinates, σ² = c/g (``dpdash.sampling.discrete_gaussian``, rational σ²).
        3. The output g·(Σ ξξᵀ + Σ ζζᵀ) is computed in exact integer arithmetic.

        Exact: every random bit (OS randomness, exact samplers), the arithmetic, positive
        semidefiniteness (a sum of outer products of integer vectors), and the output lattice g·ℤ^(d×d),
        which does not depend on the data (no floating-point leak, Mironov 2012).
        Not exact: the noise only approximates Wishart_d(d + 1, c·I) (ζ/σ is a discrete Gaussian, not a
        normal vector); the continuous analysis above does not carry over (the lattice law carries the
        number of ways an integer matrix splits into d + 1 outer products, which varies with the matrix,
        so the loss on the common support is no longer constant); and the continuous mechanism is only
        (0, 1 − e^(−ε/3))-DP anyway. Treat the output as carrying no proven guarantee.

        One draw of ``release_trials``: the same code.
        """
        return self.release_trials(rows, 1)[0]

    def release_trials(self, values: npt.ArrayLike, n: int) -> np.ndarray:
        """n independent outputs of ``release(values)`` (``values``: the rows), shape (n, d, d), by the same
        code: the rows' Gram matrix Σ ξξᵀ once, and for each output its own ζ (all n·(d + 1)·d exact
        discrete Gaussian coordinates drawn at once) and noise Σ ζζᵀ, a batched int64 product.
        For an empirical privacy audit."""
        x = self._rows(values)
        count = check.draws(n, "n", self.dimension * self.degrees_of_freedom)
        h = self.grid
        d = self.dimension
        xi = np.rint(self._clip(x, self.norm_bound - h * math.sqrt(d) / 2.0) / h).astype(np.int64)
        bound = int(np.abs(xi).max(initial=0)) ** 2 * x.shape[0]
        if bound >= 2**62:
            raise ParameterError("too many rows for exact int64 arithmetic on the grid; reduce the data")
        gram = xi.T @ xi
        sigma_squared = Fraction(self.scale) / (Fraction(h) ** 2 / self.rows)
        out = np.empty((count, d, d))
        block = max(_BLOCK // (self.degrees_of_freedom * d), 1)  # outputs per block: bounded memory
        for start in range(0, count, block):
            stop = min(start + block, count)
            zeta = sampling.discrete_gaussian(
                sigma_squared=sigma_squared, size=(stop - start, self.degrees_of_freedom, d)
            )
            # Each entry of ζᵀζ is a sum of d + 1 products: below 2^62 it cannot wrap around in int64.
            if int(np.abs(zeta).max(initial=0)) ** 2 * self.degrees_of_freedom >= 2**62:
                raise ParameterError(_LEFT_THE_LATTICE)
            total = gram[None, :, :] + np.swapaxes(zeta, 1, 2) @ zeta
            if np.abs(total).max(initial=0) >= 2**53:
                raise ParameterError(_LEFT_THE_LATTICE)
            out[start:stop] = total.astype(float) * (h * h / self.rows)
        return out
