"""The planner's searches (``planning``): the largest common factor of ε whose total still fits a budget (a
bracket, then Illinois steps on the log of the factor), the largest count of releases that fits, and the
order in which the tightest accountant's components are asked (cheapest first)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dpdash.accounting.budget import Budget
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dpdash.accounting.accountant import REL_SLACK, Accountant
from dpdash.accounting.events import PrivacyEvent
from dpdash.accounting.tightest import TightestAccountant

__all__ = []


# The common factor is found to this relative precision (and rounded down, so the plan always fits).
_FACTOR_RTOL = 1e-4


_MAX_STEPS = 200


def _fits(total: float, budget: Budget) -> bool:
    return total <= budget.epsilon * (1.0 + REL_SLACK)


_COST_ORDER = {"basic": 0, "advanced": 1, "optimal": 2, "zcdp": 3, "rdp": 4, "pld": 6}


def _components(keeper: Accountant, events: list[PrivacyEvent]) -> list[Accountant]:
    """The accountants whose largest fitting factor (or count) ``keeper``'s is: for the tightest one, its
    usable components, cheapest first; else ``keeper`` itself."""
    if isinstance(keeper, TightestAccountant):
        return sorted(keeper.usable(events), key=lambda c: _COST_ORDER.get(c.name, 5))
    return [keeper]


def _largest_factor(
    attempt: Callable[[float], tuple[float, Any]],
    start: float,
    budget: Budget,
    *,
    must_fit_start: bool = False,
    lower: float = 0.0,
) -> tuple[float, Any] | None:
    """The largest t (to a relative ``_FACTOR_RTOL``, rounded down) whose total fits ``budget``, for totals
    that grow with t; ``attempt(t)`` returns (total, payload). None if no t ≥ max(start/1e12, lower) fits
    (or, with ``must_fit_start``, if ``start`` itself does not); ``lower`` is the smallest t whose
    mechanisms can be built (ε ≥ the supported minimum)."""
    limit = budget.epsilon * (1.0 + REL_SLACK)
    start = max(start, lower)
    total, payload = attempt(start)
    if total <= limit:
        lo = (math.log(start), total - limit, payload)
        hi = None
        # From a point another accountant found, the answer is usually close: grow in small, doubling steps.
        step = math.log(1.05) if must_fit_start else math.log(2.0)
        while hi is None:  # grow until it no longer fits
            u = lo[0] + step
            total, payload = attempt(math.exp(u))
            if total <= limit:
                lo, step = (u, total - limit, payload), step * 2.0
            else:
                hi = (u, total - limit)
            if step > 1000.0:  # pragma: no cover - everything fits: nothing bounds the factor
                return math.exp(lo[0]), lo[2]
    elif must_fit_start or attempt(max(start * 1e-12, lower))[0] > limit:
        return None  # nothing of any use fits
    else:
        hi = (math.log(start), total - limit)
        found = None
        while found is None:  # shrink until it fits
            u = max(hi[0] - math.log(2.0), math.log(lower) if lower > 0 else -math.inf)
            total, payload = attempt(math.exp(u))
            if total <= limit:
                found = (u, total - limit, payload)
            else:
                hi = (u, total - limit)
        lo = found
    best = _illinois(lambda u: attempt(math.exp(u)), lo, hi, limit, math.log1p(_FACTOR_RTOL))
    return math.exp(best[0]), best[2]


def _illinois(
    attempt: Callable[[float], tuple[float, Any]],
    lo: tuple[float, float, Any],
    hi: tuple[float, float],
    limit: float,
    width: float,
) -> tuple[float, float, Any]:
    """Shrink [lo, hi] (points u = log t; lo fits: g ≤ 0; hi does not: g > 0, g = total − limit) to ``width``
    by the Illinois variant of regula falsi on the secant in t (totals are smooth in the factor, and nearly
    straight in t itself, so a few steps suffice), with a bisection step in u whenever the bracket has not
    halved in two steps. Returns the last fitting point."""
    g_lo, g_hi = lo[1], hi[1]
    side = 0
    lengths = [2.0 * (hi[0] - lo[0])] * 2  # so that the first two steps interpolate
    for _ in range(_MAX_STEPS):
        a, b = lo[0], hi[0]
        if b - a <= width:
            break
        if math.isfinite(g_hi) and g_hi > g_lo and (b - a) <= lengths[-2] / 2.0:
            ta, tb = math.exp(a), math.exp(b)
            x = math.log(tb - g_hi * (tb - ta) / (g_hi - g_lo))
        else:  # no usable slope, or interpolation stalled for two steps: bisect
            x = (a + b) / 2.0
        lengths.append(b - a)
        x = min(max(x, a + width / 2.0), b - width / 2.0)
        total, payload = attempt(x)
        g = total - limit
        if g <= 0.0:
            lo, g_lo = (x, g, payload), g
            if side == -1:
                g_hi /= 2.0
            side = -1
        else:
            hi, g_hi = (x, g), g
            if side == 1:
                g_lo /= 2.0
            side = 1
    return lo


def _largest_count(fits: Callable[[int], bool], known: int, limit: int) -> int:
    """The largest k ≤ ``limit`` with ``fits(k)``, for a predicate that holds up to some k and no further,
    given that ``known`` holds (0: nothing known): grow from known + 1 in doubling steps (from a sixteenth of
    it) until it fails, then bisect."""
    if known >= limit or not fits(known + 1):
        return known
    lo, step = known + 1, max(1, (known + 1) // 16)
    while True:  # lo fits
        hi = min(lo + step, limit)
        if hi == lo:
            return lo
        if not fits(hi):
            break
        lo, step = hi, step * 2
    while hi - lo > 1:  # lo fits, hi does not
        middle = (lo + hi) // 2
        if fits(middle):
            lo = middle
        else:
            hi = middle
    return lo
