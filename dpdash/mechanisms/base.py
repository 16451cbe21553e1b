"""What every additive noise mechanism offers: its analytic side and its random side.

A mechanism answers a numeric query f by f(x) + Z, with Z drawn from ``noise``. The analytic side
(``scale``, ``noise``, ``std``, ``accuracy``, ``privacy_profile``) is exact for the mechanism's stated
definition; the random side has ``simulate`` (fast numpy draws, for previews that are never published).

Subclasses are frozen, keyword-only dataclasses (``Laplace(epsilon=1.0, sensitivity=1.0)``), so ε and Δ
cannot be swapped by position, and a mechanism is a value: comparable, hashable, safe to share.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from functools import lru_cache
from typing import Any, ClassVar, Self

import numpy as np
import numpy.typing as npt

from dpdash import _validation as check
from dpdash._search import bracket, smallest_true
from dpdash.accuracy import simultaneous_coverage, simultaneous_tail, union_bound_tail
from dpdash.errors import ParameterError
from dpdash.mechanisms.grid import IntegerNoise, ReleasePlan, integer_answers

__all__ = ["IntegerNoiseMechanism", "NoiseMechanism", "SensitivityNorm"]

SensitivityNorm = str  # "l1", "l2" or "coordinate"; see NoiseMechanism.sensitivity_norm


class NoiseMechanism(ABC):
    """Base class of the additive noise mechanisms.

    Class attributes:
        name: what the mechanism is called on screen.
        integer_valued: True when noise (and so the answer) is an integer; such mechanisms need integer
            true answers and an integer sensitivity, and report integer half-widths.
        sensitivity_norm: how ``sensitivity`` is measured when the answer has k > 1 coordinates:
            ``"l1"`` (ℓ1 norm of the change of the whole vector), ``"l2"`` (ℓ2 norm), or
            ``"coordinate"`` (neighbours change one coordinate, by at most ``sensitivity``).
    """

    __slots__ = ()

    name: ClassVar[str]
    integer_valued: ClassVar[bool] = False
    sensitivity_norm: ClassVar[SensitivityNorm]

    epsilon: float
    delta: float  # δ of the (ε, δ) guarantee: a field of the Gaussian ones, the constant 0 otherwise
    sensitivity: float

    # ---- privacy -------------------------------------------------------------------------------
    @property
    def rho(self) -> float:
        """ρ of a ρ-zCDP guarantee. Pure ε-DP implies (ε²/2)-zCDP (Bun & Steinke 2016, Prop. 1.4)."""
        return self.epsilon**2 / 2.0

    def privacy_profile(self, epsilons: npt.ArrayLike) -> np.ndarray:
        """δ(ε′): the smallest δ for which the mechanism is (ε′, δ)-DP, for each ε′ ≥ 0.

        This is the hockey-stick divergence sup over neighbours of E_P[(1 − e^(ε′ − L))⁺], L the
        privacy loss (Balle, Barthe & Gaboardi 2018, "privacy profiles"), worst case over neighbours at
        distance ``sensitivity``.
        """
        eps = check.non_negative_array(epsilons, "epsilons").astype(float)
        return np.clip(self._profile(eps), 0.0, 1.0)

    @abstractmethod
    def _profile(self, eps: np.ndarray) -> np.ndarray:
        """δ(ε′) for an array of ε′ ≥ 0 (validated)."""

    # ---- the noise -------------------------------------------------------------------------------
    @property
    @abstractmethod
    def scale(self) -> float:
        """The noise's scale parameter (b for Laplace-type noise, σ for Gaussian-type noise)."""

    @property
    @abstractmethod
    def noise(self) -> Any:
        """The noise distribution: a frozen scipy.stats distribution or an object with the same methods
        (pdf or pmf, cdf, sf, ppf, isf, mean, var, std)."""

    @property
    def variance(self) -> float:
        """Var[Z] of one coordinate's noise."""
        return float(self.noise.var())

    @property
    def std(self) -> float:
        """Standard deviation of one coordinate's noise."""
        return math.sqrt(self.variance)

    # ---- accuracy --------------------------------------------------------------------------------
    @abstractmethod
    def tail(self, half_width: float) -> float:
        """Pr[|Z| > half_width] for one coordinate."""

    @abstractmethod
    def _half_width(self, tail: float) -> float:
        """The smallest a ≥ 0 with Pr[|Z| > a] ≤ tail (an integer for integer mechanisms)."""

    def accuracy(self, confidence: float = 0.95, k: int = 1) -> float:
        """Smallest half-width a with Pr[max over k independent coordinates |Z_i| ≤ a] ≥ confidence.

        Exact (dpdash convention, MATH.md "Accuracy"); an ``int`` for integer-valued mechanisms.
        """
        return self._half_width(simultaneous_tail(confidence, k))

    def accuracy_union_bound(self, confidence: float = 0.95, k: int = 1) -> float:
        """The textbook half-width: each coordinate within a with probability 1 − (1 − confidence)/k.

        By the union bound all k are then within a with probability ≥ confidence (Dwork & Roth,
        Theorem 3.8 for Laplace: b·ln(k/β)). Never below ``accuracy``; labelled "union bound".
        """
        return self._half_width(union_bound_tail(confidence, k))

    def coverage(self, half_width: float, k: int = 1) -> float:
        """Pr[max over k independent coordinates |Z_i| ≤ half_width] = (1 − Pr[|Z| > a])^k."""
        a = check.non_negative_finite(half_width, "half_width")
        return simultaneous_coverage(self.tail(a), k)

    @classmethod
    def _check_alpha(cls, alpha: object) -> float:
        if cls.integer_valued:
            return check.non_negative_finite(alpha, "alpha")
        return check.positive_finite(alpha, "alpha")

    @classmethod
    def for_accuracy(
        cls,
        *,
        alpha: float,
        confidence: float = 0.95,
        sensitivity: float,
        k: int = 1,
        **params: Any,
    ) -> Self:
        """The mechanism with the smallest ε whose ``accuracy(confidence, k)`` is ≤ ``alpha``.

        Other parameters (δ for the Gaussian ones, γ for the staircase) stay as given in ``params``.
        Where ε has a closed form (``_closed_form_epsilon``: Laplace, the classic Gaussian) it is the start,
        stepped up one ulp at a time until the accuracy is met; otherwise ε is found by bisection over the
        bits of a double, so it is the smallest to within one unit in the last place. Either way the
        returned mechanism's accuracy is checked to be ≤ alpha.
        """
        alpha = cls._check_alpha(alpha)
        closed_form = cls._closed_form_epsilon(alpha, confidence, sensitivity, k, params)
        if closed_form is not None:
            return cls._first_meeting(closed_form, alpha, confidence, k, sensitivity=sensitivity, **params)
        confidence = check.open_unit(confidence, "confidence")
        k = check.positive_int(k, "k")

        def build(epsilon: float) -> Self:
            return cls(epsilon=epsilon, sensitivity=sensitivity, **params)

        def meets(epsilon: float) -> bool:
            return build(epsilon).accuracy(confidence, k) <= alpha

        # Accuracy scales roughly like 1/ε: a good first guess saves doubling steps.
        at_one = build(1.0).accuracy(confidence, k)
        guess = at_one / alpha if alpha > 0 and at_one > 0 else 1.0
        if meets(check.EPSILON_MIN):
            raise _met_everywhere(alpha)
        if not meets(check.EPSILON_MAX):
            raise _out_of_reach(alpha)
        lo, hi = bracket(
            meets, guess, lower=check.EPSILON_MIN, upper=check.EPSILON_MAX,
            what=f"epsilon for accuracy alpha={alpha:g}",
        )  # fmt: skip
        return build(smallest_true(meets, lo, hi))

    @classmethod
    def _closed_form_epsilon(
        cls, alpha: float, confidence: float, sensitivity: float, k: int, params: dict[str, Any]
    ) -> float | None:
        """The ε whose accuracy is α in closed form (before rounding), or ``None`` where there is none
        and ``for_accuracy`` searches. ``alpha`` is checked; the other arguments are as given."""
        return None

    @classmethod
    def _first_meeting(cls, epsilon: float, alpha: float, confidence: float, k: int, **params: Any) -> Self:
        """The mechanism at ``epsilon`` (a closed-form answer), stepped up one ulp at a time until its
        accuracy is ≤ α: rounding in the closed form can leave it one ulp short."""
        if epsilon > check.EPSILON_MAX:
            raise _out_of_reach(alpha)
        if epsilon < check.EPSILON_MIN:
            raise _met_everywhere(alpha)
        mechanism = cls(epsilon=epsilon, **params)
        while mechanism.accuracy(confidence, k) > alpha:
            if epsilon >= check.EPSILON_MAX:
                raise _out_of_reach(alpha)
            epsilon = math.nextafter(epsilon, math.inf)
            mechanism = cls(epsilon=epsilon, **params)
        return mechanism

    # ---- simulation (previews only) --------------------------------------------------------------
    @abstractmethod
    def _draw(self, rng: np.random.Generator, size: tuple[int, ...]) -> np.ndarray:
        """``size`` independent noise draws from numpy's generator."""

    def simulate(
        self,
        true_value: npt.ArrayLike,
        size: int,
        rng: np.random.Generator | int | None = None,
    ) -> np.ndarray:
        """``size`` possible noisy answers, for previews only (numpy sampling, never for publishing).

        Args:
            true_value: the true answer, a number or an array of k answers.
            size: how many possible releases to draw.
            rng: a numpy Generator or a seed; ``None`` draws a fresh unseeded generator.

        Returns:
            An array of shape ``(size, *shape(true_value))``.
        """
        values = check.numeric_array(true_value, "true_value")
        n = check.draws(size, "size", values.size)
        generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        if self.integer_valued:
            # The same answers and noise width as ``release`` accepts: int64 arithmetic cannot wrap.
            answers = integer_answers(values, self.name, "true_value")
            _plan(self, 1)
            return answers + self._draw(generator, (n, *values.shape)).astype(np.int64)
        if not np.all(np.isfinite(values)):
            raise ParameterError(f"true_value must be finite numbers, got true_value={true_value!r}")
        out = values.astype(float) + self._draw(generator, (n, *values.shape))
        if not np.all(np.isfinite(out)):
            raise ParameterError(
                "true_value is too close to the largest double for noise to be added "
                f"(got true_value={true_value!r}); rescale the query"
            )
        return out

    # ---- release (publishable) -------------------------------------------------------------------
    @abstractmethod
    def release_plan(self, k: int = 1) -> ReleasePlan:
        """The grid and the exact integer noise that ``release`` uses for k answers."""

    def release(self, values: npt.ArrayLike) -> np.ndarray:
        """Noisy answers that may be published: the k = size(values) answers go through
        ``release_plan(k)``: exact integer noise from ``dpdash.sampling`` on the operating system's
        randomness, on a fixed grid for real answers. No seed and no generator argument, on purpose.
        (One draw of ``release_trials``: the same code.)"""
        return self.release_trials(values, 1)[0]

    def release_trials(self, values: npt.ArrayLike, n: int) -> np.ndarray:
        """n independent outputs of ``release(values)``, release-grade (exact samplers on OS randomness,
        the same code path and the same calibration as ``release``), shape (n, *shape of one release).

        Each of the n copies is one release of k = size(values) answers through ``release_plan(k)`` (not
        the plan for n·k answers): the answers are rounded to its grid once and every copy gets its own
        exact integer noise. For an empirical privacy audit; n releases of the same data are not a
        publication the stated ε covers (they compose to n·ε).
        """
        k = max(int(check.numeric_array(values, "values").size), 1)
        count = check.draws(n, "n", k)
        return _plan(self, k).apply(values, self.name, trials=count)

    def release_accuracy(self, confidence: float = 0.95, k: int = 1) -> float:
        """A half-width a with Pr[all k released answers within ±a of the truth] ≥ confidence, for the
        noise ``release`` actually adds: exact for integer mechanisms; for real-valued ones the exact
        half-width of the grid noise plus g/2 for rounding the answer to the grid."""
        tail = simultaneous_tail(confidence, k)
        return _plan(self, check.positive_int(k, "k")).half_width(tail)

    # ---- shared validation for subclasses ---------------------------------------------------------
    def _set(self, name: str, value: object) -> None:
        """Assign a normalised field on a frozen dataclass (used in ``__post_init__``)."""
        object.__setattr__(self, name, value)

    def _check_sensitivity(self) -> None:
        """Validate Δ in place: an integer for integer-valued mechanisms, else a finite number ≥ 0."""
        if self.integer_valued:
            self._set("sensitivity", check.integer_sensitivity(self.sensitivity, self.name))
        else:
            self._set("sensitivity", check.sensitivity(self.sensitivity))


class IntegerNoiseMechanism(NoiseMechanism):
    """Base class of the integer-valued mechanisms (geometric, discrete Gaussian): integer answers plus
    exact integer noise, ``_integer_noise``, whose exact tails give the accuracy and which ``release``
    adds as it is (no grid)."""

    __slots__ = ()

    integer_valued: ClassVar[bool] = True

    @property
    def _integer_noise(self) -> IntegerNoise:
        """The noise as the exact integer law that ``release`` samples: ``noise`` itself where that is one
        of dpdash's exact laws (the discrete Gaussian's)."""
        return self.noise

    def tail(self, half_width: float) -> float:
        """Pr[|Z| > a] = Pr[|Z| > ⌊a⌋] (Z is an integer), from the noise's exact log tail."""
        a = check.non_negative_finite(half_width, "half_width")
        return math.exp(self._integer_noise.log_abs_tail(math.floor(a)))

    def _half_width(self, tail: float) -> int:
        return self._integer_noise.half_width(tail)

    def release_plan(self, k: int = 1) -> ReleasePlan:
        """Integer answers plus exactly the noise ``_integer_noise``, for any number of answers."""
        return ReleasePlan(None, self._integer_noise)


def _met_everywhere(alpha: float) -> ParameterError:
    return ParameterError(
        f"accuracy alpha={alpha:g} is met even at the smallest supported epsilon {check.EPSILON_MIN:g}; "
        "any supported ε gives it"
    )


def _out_of_reach(alpha: float) -> ParameterError:
    return ParameterError(
        f"accuracy alpha={alpha:g} needs epsilon above {check.EPSILON_MAX:g}, the largest dpdash supports; "
        "accept a larger error, a lower confidence or fewer answers"
    )


@lru_cache(maxsize=256)
def _plan(mechanism: NoiseMechanism, k: int) -> ReleasePlan:
    """Release plans are deterministic values of (mechanism, k): computed once."""
    return mechanism.release_plan(k)
