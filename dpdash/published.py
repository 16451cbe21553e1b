"""The ± a release publishes, which its preview promised: one definition per kind of query, computed here.

The owner's preview (``dpdash.preview``), the release (``dpdash.release``), its exports (the CSV, the JSON
record and the reproduction script, ``dpdash.export``) and the stakeholder report (``dpdash.report``)
all take the ± from this module, so they state the same numbers with the same meaning. Every
:class:`Accuracy` says what it is: per value (``half_widths``: each value on its own) and for all values
at once (``joint_half_width``), at the stated ``confidence``, in the values' own units (a quantile's in
the column's units, never a utility score).

What is published must be safe to publish, so a published ± is computed from public things only: the
public facts, the calibrated noise laws and, where the ± depends on the value, the released values. It
is never a function of the true values, with one exception (quantiles, below).

- **One noisy answer per value** (count, sum, histogram, group-by count and sum, contingency table,
  second moment), method ``"exact"`` or ``"exact + grid rounding"``: the exact half-width of the noise
  ``release`` adds to k values (``NoiseMechanism.release_plan(k)``): per value the smallest a with
  Pr[|noise| ≤ a] ≥ c, all at once the smallest a with Pr[max of k |noise| ≤ a] ≥ c (MATH.md,
  Accuracy). It depends on ε, δ and the sensitivity only: the preview and the release state the same
  number. Rounding (``round``, ``round_decimals``) adds half its step; clamping at 0 a value that cannot
  be negative never moves it away from the truth and adds nothing (method ``"exact + rounding"``).
- **Answers combined from noisy pieces** (mean, variance, group-by mean), and post-processing without
  a closed-form allowance (``round_significant``, ``project_psd``, clamping a value that may be
  negative), method ``"simulated"``: the ⌈cN⌉-th smallest error over N = ``simulation_draws(k)``
  seeded draws (``SIMULATION_SEED``) of the pieces' noise laws around the values it is stated at,
  combined and post-processed exactly as the release is (``simulate_releases``). The release states it
  at its released pieces (a parametric bootstrap: post-processing of public values, safe to publish);
  the owner's preview states the same function at the true pieces. The two differ by the count's noise
  only: the ± of a ratio is essentially the noise of its numerator divided by the count, so it must be
  evaluated at some count, and a ± evaluated at the true count would publish that count without noise
  (a group-by mean's ± to 4 digits gives each group's count to a fraction of a row). The preview says
  so, and shows how much the published ± moves from release to release (``stated_range``).
- **Quantiles**, method ``"exact selection chances"``: from the selection mechanism's exact chance of
  each public candidate, the smallest a with Pr[|picked − best| ≤ a] ≥ c, where best is the best
  public candidate (the one closest in rank to the exact quantile, ``Evaluation.values``); all
  quantiles at once likewise with the product of their chances (independent selections). These chances
  depend on the data (the ranks of the candidates), so this ± is the one published figure computed from
  the true table: MATH.md asks for it (an interval in the column's units, never a utility score). It is
  measured from the best public candidate and not from the exact empirical quantile, which a distance to
  a public candidate would give away; the owner sees how far the exact quantile is from the best
  candidate (``DataReport.clipping_bias``). When the exact chances are too long a sum (report-noisy-max
  at a tiny ε), they are the frequencies of ``SELECTION_DRAWS`` seeded draws, and the definition says so.
- **Mode**, method ``"count gap bound"``: the categories have no distance between them, so the ± is
  in rows: with probability ≥ c the chosen category's count is within g rows of the largest count
  (the mechanism's tail bound, ``utility_gap``; public).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from dpdash import _validation as check
from dpdash.accuracy import simultaneous_tail
from dpdash.errors import ParameterError

__all__ = [
    "SELECTION_DRAWS",
    "SIMULATION_DRAWS",
    "SIMULATION_SEED",
    "Accuracy",
    "SimulatedWidths",
    "noise_accuracy",
    "numeric_accuracy",
    "read_half_widths",
    "selection_accuracy",
    "selection_chances",
    "simulate_releases",
    "simulation_draws",
    "stated_range",
]

#: Possible releases a simulated ± draws (fewer when there are many values: at most
#: ``_SIMULATION_NUMBERS`` numbers in all, and never fewer than ``_SIMULATION_MIN_DRAWS`` draws).
SIMULATION_DRAWS = 4_000
SIMULATION_SEED = 20261122
_SIMULATION_NUMBERS = 2_000_000
_SIMULATION_MIN_DRAWS = 400
#: Draws that estimate a selection's chances when the exact ones are too long a sum.
SELECTION_DRAWS = 200_000
#: z of the two-sided 95% normal interval, for the Monte Carlo error of a simulated half-width.
_Z95 = 1.959963984540054

#: Methods whose half-widths hold with probability at least the confidence (the others: about it).
_GUARANTEED = ("exact", "exact + grid rounding", "exact + rounding", "exact selection chances",
               "count gap bound", "exact per category + union bound")  # fmt: skip


@dataclass(frozen=True, slots=True)
class Accuracy:
    """The ± of released values, and exactly what it means (see the module docstring).

    Attributes:
        confidence: c.
        half_widths: one a_i per value. ``scope == "each"``: each value on its own is within ±a_i of its
            true value with probability c; ``"all"`` (release records made before dpdash stated both):
            all values at once.
        method: how the numbers were computed: ``"exact"``, ``"exact + grid rounding"``,
            ``"exact + rounding"``, ``"simulated"``, ``"exact selection chances"``, ``"count gap bound"``,
            ``"exact per category + union bound"`` (randomized response); ``"bound"`` and
            ``"utility bound"`` in older records.
        definition: the same, in words.
        joint_half_width: a for all values at once: Pr[every value within ±a] ≥ c (``None`` in older
            records).
        scope: ``"each"`` or ``"all"``, as above.
    """

    confidence: float
    half_widths: tuple[float, ...]
    method: str
    definition: str
    joint_half_width: float | None = None
    scope: str = "each"

    def __post_init__(self) -> None:
        if self.scope not in ("each", "all"):
            raise ParameterError(f"scope must be 'each' or 'all', got scope={self.scope!r}")

    @property
    def guaranteed(self) -> bool:
        """Whether the half-widths hold with probability at least c (else: about c, simulated)."""
        return self.method in _GUARANTEED

    @property
    def column_label(self) -> str:
        """A header for the ± column: "± each value (95%)" or "± all values at once (95%)"."""
        what = "each value" if self.scope == "each" else "all values at once"
        return f"± {what} ({self.confidence * 100:.4g}% confidence)"

    def to_dict(self) -> dict[str, Any]:
        return {
            "confidence": self.confidence,
            "half_widths": list(self.half_widths),
            "method": self.method,
            "definition": self.definition,
            "joint_half_width": self.joint_half_width,
            "scope": self.scope,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Accuracy:
        """Read back ``to_dict``; a record without ``scope`` is an older one, whose half-widths held for
        all values at once."""
        joint = data.get("joint_half_width")
        return cls(
            confidence=float(data["confidence"]),
            half_widths=tuple(data["half_widths"]),
            method=str(data["method"]),
            definition=str(data["definition"]),
            joint_half_width=None if joint is None else float(joint),
            scope=str(data.get("scope", "all")),
        )


# ---- one noisy answer per value: exact ----------------------------------------------------------------


def _never_negative(query: Any) -> bool:
    """Whether every true value of ``query`` is ≥ 0 (counts; sums of values bounded below by 0)."""
    from dpdash.queries import ContingencyTable, Count, GroupByCount, GroupBySum, Histogram, Sum

    if isinstance(query, Count | Histogram | ContingencyTable | GroupByCount):
        return True
    if isinstance(query, Sum | GroupBySum):
        return query.bounds.lower >= 0
    return False


def _rounding_allowance(steps: Sequence[str], query: Any, integer: bool) -> float | None:
    """The most the post-processing ``steps`` can add to |released − true|, or ``None`` when there is
    no such closed form (then the ± is simulated). Rounding adds half its step (nothing when the values
    are integers already and the step is 1 or finer); clamping at 0 a value that cannot be negative is
    a projection onto a set holding the truth, which never increases the error."""
    from dpdash.postprocessing import parse_step

    total = 0.0
    for step in steps:
        name, parameter = parse_step(step)
        if name == "clamp_nonnegative" and _never_negative(query):
            continue
        if name == "round" or (name == "round_decimals" and parameter is not None):
            decimals = 0 if name == "round" else int(parameter)  # type: ignore[arg-type]
            if not (integer and decimals >= 0):
                total += 0.5 * 10.0 ** (-decimals)
            continue
        return None
    return total


def _per_value(mechanism: Any, confidence: float, k: int) -> float:
    """Per value: the smallest a with Pr[|noise| ≤ a] ≥ c for the noise the release adds to k values."""
    return float(mechanism.release_plan(k).half_width(simultaneous_tail(confidence, 1)))


def noise_accuracy(
    mechanism: Any, k: int, confidence: float = 0.95, *, postprocess: Sequence[str] = (), query: Any = None
) -> Accuracy | None:
    """The exact ± of one noisy answer per value (k values): per value and all at once, plus half a
    rounding step per rounding in ``postprocess``. ``None`` when a post-processing step has no such
    allowance (``numeric_accuracy`` then simulates)."""
    c = check.open_unit(confidence, "confidence")
    k = check.positive_int(k, "k")
    integer = bool(mechanism.integer_valued)
    allowance = _rounding_allowance(tuple(postprocess), query, integer)
    if allowance is None:
        return None
    each = _per_value(mechanism, c, k) + allowance
    joint = float(mechanism.release_accuracy(c, k)) + allowance
    if integer and allowance == int(allowance):
        each, joint = int(each), int(joint)
    method = "exact" if integer else "exact + grid rounding"
    noise = (
        "exact for the integer noise added"
        if integer
        else "exact for the noise added on the release grid, plus half a grid step"
    )
    if allowance:
        method = "exact + rounding"
        noise += f", plus {allowance:g} for the rounding applied after"
    if postprocess:
        from dpdash.postprocessing import describe_postprocessing

        noise += "; post-processing: " + "; then ".join(describe_postprocessing(s) for s in postprocess)
    definition = (
        f"{method}: each released value is within ±a of its true value with probability {c:g}"
        + (f"; all {k} at once within ±{joint:.6g} with probability {c:g}" if k > 1 else "")
        + f" ({noise}; {mechanism.name}, scale {mechanism.scale:.4g}; from the public noise law only)"
    )
    return Accuracy(c, (each,) * k, method, definition, joint_half_width=joint)


# ---- noisy pieces combined, and other post-processing: simulated ----------------------------------------


def simulation_draws(k: int) -> int:
    """The number of draws a simulated ± of k values uses: ``SIMULATION_DRAWS``, fewer for very many
    values (memory), never fewer than 400."""
    return max(_SIMULATION_MIN_DRAWS, min(SIMULATION_DRAWS, _SIMULATION_NUMBERS // max(k, 1)))


def simulate_releases(
    query: Any,
    pieces: Sequence[Any],
    true_pieces: Mapping[str, npt.ArrayLike],
    *,
    postprocess: Sequence[str] = (),
    draws: int = SIMULATION_DRAWS,
    rng: np.random.Generator | int = SIMULATION_SEED,
) -> np.ndarray:
    """``draws`` possible published answers, shape (draws, k): each calibrated piece
    (``dpdash.release.calibrate``) drawn with the fast numpy sampler around its value in
    ``true_pieces``, combined as the query combines them (a mean: centre + noisy centred sum /
    max(noisy count, 1)), then post-processed with ``dpdash.release.postprocess_values``. Never
    published: only the ± read off them is.

    ``true_pieces`` maps each piece's name to the values the draws are centred on: the true values for
    the owner's preview, the released noisy values for the ± a release states (``{"answer": values}``
    for a query of one piece; ``Evaluation.pieces`` for a composite query).
    """
    from dpdash.postprocessing import postprocess_values
    from dpdash.queries import CompositeQuery

    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    n = check.positive_int(draws, "draws")
    noisy = {}
    for piece in pieces:
        centre = np.atleast_1d(np.asarray(true_pieces[piece.name]))
        noisy[piece.name] = np.asarray(piece.mechanism.simulate(centre, n, rng=generator), dtype=float)
    if isinstance(query, CompositeQuery):
        values = np.asarray(query.combine(noisy), dtype=float)
    else:
        values = noisy["answer"]
    if postprocess:
        values = postprocess_values(postprocess, query, values)
    return values.reshape(n, -1)


def _order_statistic(sorted_values: np.ndarray, rank: float) -> np.ndarray:
    """The value at 1-based ``rank`` (clipped to 1..N) along axis 0 of sorted draws."""
    n = sorted_values.shape[0]
    index = int(min(max(math.ceil(rank), 1), n)) - 1
    return sorted_values[index]


@dataclass(frozen=True, slots=True)
class SimulatedWidths:
    """±a read off N draws: per value, all at once, and the Monte Carlo error of the all-at-once one
    (its distribution-free 95% interval [low, high])."""

    each: np.ndarray
    joint: float
    low: float
    high: float
    mc_error: float
    draws: int


def read_half_widths(samples: npt.ArrayLike, centre: npt.ArrayLike, confidence: float) -> SimulatedWidths:
    """Per value the ⌈cN⌉-th smallest |sample_i − centre_i| of the N draws; all at once the same order
    statistic of max_i |sample_i − centre_i|. Its Monte Carlo standard error is (hi − lo)/(2·1.96), where
    [lo, hi] are the order statistics of ranks cN ∓ 1.96·√(N·c·(1 − c)): a distribution-free 95%
    interval for the true quantile (the rank of the true quantile among the draws is Binomial(N, c))."""
    draws = np.asarray(samples, dtype=float)
    truth = np.atleast_1d(np.asarray(centre, dtype=float))
    if draws.ndim != 2 or draws.shape[1] != truth.size:
        raise ParameterError(f"samples must have shape (draws, {truth.size}), got {draws.shape}")
    c = check.open_unit(confidence, "confidence")
    n = draws.shape[0]
    errors = np.abs(draws - truth[None, :])
    each = np.asarray(_order_statistic(np.sort(errors, axis=0), c * n), dtype=float)
    joint_errors = np.sort(np.max(errors, axis=1))
    joint = float(_order_statistic(joint_errors, c * n))
    spread = _Z95 * math.sqrt(n * c * (1.0 - c))
    low = float(_order_statistic(joint_errors, c * n - spread))
    high = float(_order_statistic(joint_errors, c * n + spread))
    return SimulatedWidths(each, joint, low, high, (high - low) / (2.0 * _Z95), n)


def _simulated_definition(widths: SimulatedWidths, c: float, k: int, at: str, steps: Sequence[str]) -> str:
    from dpdash.postprocessing import describe_postprocessing

    after = "; then ".join(describe_postprocessing(s) for s in steps)
    return (
        f"simulated at {at}: in {c:.0%} of {widths.draws:,} possible releases (seeded numpy draws, seed "
        f"{SIMULATION_SEED}, of each piece's exact noise law around its value there, combined"
        + (f" and post-processed ({after})" if steps else "")
        + " as the release is) each value is within ±a of the value computed there"
        + (f", and all {k} at once within ±{widths.joint:.6g}" if k > 1 else "")
        + f"; Monte Carlo standard error of ±a ≈ {widths.mc_error:.2g} (all values at once)"
    )


def numeric_accuracy(
    query: Any,
    pieces: Sequence[Any],
    centre_pieces: Mapping[str, npt.ArrayLike],
    *,
    confidence: float = 0.95,
    postprocess: Sequence[str] = (),
    at: str = "the released values",
    draws: int | None = None,
    seed: int = SIMULATION_SEED,
) -> tuple[Accuracy, np.ndarray | None, np.ndarray]:
    """The ± of a numeric query's published values, from its calibrated ``pieces``
    (``dpdash.release.calibrate``): ``noise_accuracy`` for one noisy answer per value (it ignores
    ``centre_pieces``), otherwise simulated around ``centre_pieces`` (the released pieces for what a
    release states; the true pieces in the owner's preview, which says ``at``).

    Returns:
        (the accuracy, the simulated draws or ``None`` when exact, the values the draws are centred on:
        the query's combination of ``centre_pieces``, before post-processing).
    """
    from dpdash.queries import CompositeQuery

    c = check.open_unit(confidence, "confidence")
    steps = tuple(postprocess)
    centre = _centre_values(query, centre_pieces)
    if not isinstance(query, CompositeQuery) and len(pieces) == 1:
        exact = noise_accuracy(pieces[0].mechanism, centre.size, c, postprocess=steps, query=query)
        if exact is not None:
            return exact, None, centre
    k = centre.size
    n = simulation_draws(k) if draws is None else check.positive_int(draws, "draws")
    samples = simulate_releases(query, pieces, centre_pieces, postprocess=steps, draws=n, rng=seed)
    widths = read_half_widths(samples, centre, c)
    definition = _simulated_definition(widths, c, k, at, steps)
    accuracy = Accuracy(
        c, tuple(float(x) for x in widths.each), "simulated", definition, joint_half_width=widths.joint
    )
    return accuracy, samples, centre


def _centre_values(query: Any, centre_pieces: Mapping[str, npt.ArrayLike]) -> np.ndarray:
    from dpdash.queries import CompositeQuery

    if isinstance(query, CompositeQuery):
        floats = {name: np.asarray(v, dtype=float) for name, v in centre_pieces.items()}
        return np.atleast_1d(np.asarray(query.combine(floats), dtype=float)).ravel()
    return np.atleast_1d(np.asarray(centre_pieces["answer"], dtype=float)).ravel()


def stated_range(
    query: Any,
    pieces: Sequence[Any],
    true_pieces: Mapping[str, npt.ArrayLike],
    *,
    confidence: float = 0.95,
    postprocess: Sequence[str] = (),
    releases: int = 40,
    draws: int = 1_000,
    seed: int = SIMULATION_SEED,
) -> tuple[np.ndarray, np.ndarray]:
    """How far the simulated ± a release states moves from release to release: the 5th and 95th
    percentiles, per value, of ``numeric_accuracy`` at ``releases`` simulated released pieces (with
    ``draws`` draws each, for speed). For the owner's preview of a composite query; never published."""
    rng = np.random.default_rng(seed + 1)
    stated = []
    for _ in range(check.positive_int(releases, "releases")):
        centre = {}
        for p in pieces:
            truth = np.atleast_1d(np.asarray(true_pieces[p.name]))
            centre[p.name] = np.asarray(p.mechanism.simulate(truth, 1, rng=rng))[0]
        accuracy, _, _ = numeric_accuracy(
            query, pieces, centre, confidence=confidence, postprocess=postprocess, draws=draws, seed=seed
        )
        stated.append(accuracy.half_widths)
    values = np.asarray(stated, dtype=float)
    return np.quantile(values, 0.05, axis=0), np.quantile(values, 0.95, axis=0)


# ---- selections: exact chances ---------------------------------------------------------------------------


def selection_chances(selector: Any, utilities: npt.ArrayLike) -> tuple[np.ndarray, bool]:
    """(the chance of each candidate, whether exact): the mechanism's exact chances, or, when they are
    too long a sum to compute (report-noisy-max at a tiny ε), the frequencies of ``SELECTION_DRAWS``
    seeded draws."""
    try:
        return np.asarray(selector.probabilities(utilities), dtype=float), True
    except ParameterError:
        u = np.asarray(utilities)
        picks = selector.simulate(u, SELECTION_DRAWS, rng=SIMULATION_SEED)
        return np.bincount(picks, minlength=u.size) / SELECTION_DRAWS, False


def _coverage(chances: np.ndarray, distances: np.ndarray, a: float) -> float:
    return float(chances[distances <= a * (1 + 1e-12)].sum() / chances.sum())


def selection_accuracy(
    query: Any, selectors: Sequence[Any], utilities: Sequence[npt.ArrayLike], confidence: float = 0.95
) -> tuple[Accuracy, list[np.ndarray]]:
    """The ± of a selection query (module docstring: quantiles, mode), from its selection mechanisms
    (one per selection, as ``release`` calibrates them) and the exact utilities of its candidates.

    Returns:
        (the accuracy, the chances of each candidate, one array per selection).
    """
    from dpdash.queries import Quantile

    c = check.open_unit(confidence, "confidence")
    chances, exact = [], True
    for selector, u in zip(selectors, utilities, strict=True):
        p, is_exact = selection_chances(selector, u)
        chances.append(p)
        exact = exact and is_exact
    k = len(chances)
    if not isinstance(query, Quantile):
        m = len(query.candidates)
        each = tuple(float(s.utility_gap(c, m)) for s in selectors)
        joint = max(float(s.utility_gap(c ** (1.0 / k), m)) for s in selectors)
        definition = (
            f"with probability ≥ {c:g} the chosen category's count is within g rows of the largest count "
            f"(the mechanism's tail bound for {m} candidates; categories have no distance between them, so "
            "this ± is in rows)"
        )
        return Accuracy(c, each, "count gap bound", definition, joint_half_width=joint), chances
    grid = np.asarray(query.candidates, dtype=float)
    distances = []
    for u in utilities:
        best = grid[int(np.argmax(np.asarray(u)))]
        distances.append(np.abs(grid - best))
    each = tuple(_half_width(p, d, c) for p, d in zip(chances, distances, strict=True))
    options = np.unique(np.concatenate(distances))
    joint = float(options[-1])
    for a in options:  # the smallest a with Π_i Pr[|pick_i − best_i| ≤ a] ≥ c
        covered = math.prod(_coverage(p, d, float(a)) for p, d in zip(chances, distances, strict=True))
        if covered >= c * (1 - 1e-12):
            joint = float(a)
            break
    how = "exact chances" if exact else f"chances estimated from {SELECTION_DRAWS:,} seeded draws"
    definition = (
        f"each released quantile is within ±a of the best public candidate (the candidate closest in rank to "
        f"the exact quantile) with probability {c:g}"
        + (f"; all {k} at once within ±{joint:.6g}" if k > 1 else "")
        + f", in the column's units, from the selection mechanism's {how} of each public candidate"
        + " (these chances depend on the table, so this ± is not itself covered by ε)"
    )
    method = "exact selection chances" if exact else "simulated selection chances"
    return Accuracy(c, each, method, definition, joint_half_width=joint), chances


def _half_width(chances: np.ndarray, distances: np.ndarray, confidence: float) -> float:
    """The smallest a with Pr[distance ≤ a] ≥ c."""
    order = np.argsort(distances, kind="stable")
    covered = np.cumsum(chances[order])
    index = int(np.searchsorted(covered, confidence * (1 - 1e-12) * covered[-1]))
    return float(distances[order][min(index, distances.size - 1)])
