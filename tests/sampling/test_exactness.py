"""Exactness machinery: rigorous bounds, table/bound-function agreement, and the lazy comparisons.

The lazy paths (a uniform whose first 64 bits equal a threshold's 64-bit floor) have probability
about 2^−60 per draw, so they are driven deterministically here with a scripted bit source passed
through the samplers' private ``_bits=`` argument, and checked against thresholds computed
independently with ``decimal`` (whose exp is correctly rounded).
"""

from __future__ import annotations

from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpdash.sampling import bernoulli, bernoulli_exp, discrete_laplace
from dpdash.sampling.bits import LazyUniform
from dpdash.sampling.discrete_gaussian import acceptance_table
from dpdash.sampling.discrete_laplace import laplace_table
from dpdash.sampling.exact_math import (
    div_bounds,
    exp_bounds,
    mul_bounds,
    one_minus,
    power_bounds,
    rational_bounds,
    round_out,
)
from dpdash.sampling.geometric import digit_table, direct_table
from dpdash.sampling.thresholds import IndexedThresholds, SortedThresholds
from tests.sampling.checks import (
    ScriptedBits,
    decide,
    exp_decimal,
    floor_scaled,
    prefix_script,
)

MAX64 = 2**64 - 1

# --- rigorous bounds ------------------------------------------------------------------------------


def _contains(bounds: tuple[int, int], value: Decimal, prec: int) -> bool:
    with localcontext() as ctx:
        ctx.prec = 700
        scaled = value * (Decimal(2) ** prec)
        return bounds[0] <= scaled <= bounds[1]


@settings(max_examples=300, deadline=None)
@given(
    p=st.integers(min_value=-3000, max_value=400),
    q=st.integers(min_value=1, max_value=10**6),
    prec=st.integers(min_value=0, max_value=320),
)
def test_exp_bounds_are_valid_and_tight(p: int, q: int, prec: int) -> None:
    x = Fraction(p, q)
    lo, hi = exp_bounds(x, prec)
    assert _contains((lo, hi), exp_decimal(x), prec)
    assert 0 <= hi - lo <= 4


@pytest.mark.parametrize(
    "x",
    [
        Fraction(0),
        Fraction(1),
        Fraction(-1),
        Fraction(-1, 10**30),
        Fraction(0.7),
        Fraction(-745, 1),
    ],
)
def test_exp_bounds_edge_cases(x: Fraction) -> None:
    for prec in (0, 1, 64, 128, 1000):
        lo, hi = exp_bounds(x, prec)
        assert _contains((lo, hi), exp_decimal(x), prec)
        assert hi - lo <= 4
    assert exp_bounds(Fraction(0), 10) == (1024, 1024)
    assert exp_bounds(Fraction(-(10**9)), 64) == (0, 1)  # e^(−10^9) < 2^−65


def test_interval_helpers_round_outward() -> None:
    third = rational_bounds(Fraction(1, 3), 64)
    assert third == (2**64 // 3, 2**64 // 3 + 1)
    assert rational_bounds(Fraction(1, 4), 64) == (2**62, 2**62)
    lo, hi = mul_bounds(third, third, 64)
    assert lo <= Fraction(2**64, 9) <= hi
    lo, hi = div_bounds(third, rational_bounds(Fraction(2, 3), 64), 64)
    assert lo <= 2**63 <= hi
    assert one_minus((2**62, 2**62), 64) == (3 * 2**62, 3 * 2**62)
    assert round_out((2**70 + 1, 2**70 + 1), 70, 64) == (2**64, 2**64 + 1)
    lows, highs = power_bounds(exp_bounds(Fraction(-1, 10), 128), 50, 128)
    for k in (0, 1, 17, 50):
        assert _contains((lows[k], highs[k]), exp_decimal(Fraction(-k, 10)), 128)


# --- tables agree with their exact bound functions
# --------------------------------------------------


def _floor64(bounds_fn, k: int) -> tuple[int, int]:
    lo, hi = bounds_fn(k, 128)
    return lo >> 64, -((-hi) >> 64)


def _check_sorted_table(table: SortedThresholds, indices) -> None:
    for k in indices:
        f, c = _floor64(table.threshold_bounds, k)
        # the stored words are the same numbers, rounded a little more conservatively at most
        assert abs(int(table.floor64[k]) - f) <= 1, k
        assert abs(int(table.ceil64_m1[k]) + 1 - c) <= 1, k


@pytest.mark.parametrize("scale", [Fraction(10), Fraction(0.7), Fraction(1000)])
def test_laplace_table_matches_its_bound_function_and_the_cdf(scale: Fraction) -> None:
    table = laplace_table(scale)
    half = table.half_width
    n = table.thresholds.size
    assert n == 2 * half + 2
    _check_sorted_table(table.thresholds, sorted({0, 1, half, half + 1, half + 2, n - 1, n // 3}))
    # T_j = P(X < j − L) against an independent decimal computation
    with localcontext() as ctx:
        ctx.prec = 600
        r = exp_decimal(-1 / scale)
        for j in (0, half, half + 1, half + 5, n - 1):
            k = half + 1 - j if j <= half + 1 else j - half
            q = r**k / (1 + r)
            t = q if j <= half + 1 else 1 - q
            assert abs(int(table.thresholds.floor64[j]) - floor_scaled(t, 64)) <= 1


def test_geometric_tables_match_their_bound_functions() -> None:
    direct, length = direct_table(Fraction(7, 2))
    assert length == 42
    _check_sorted_table(direct, range(length))
    digits = digit_table(Fraction(10**6), 0)
    assert digits.size == 4095
    _check_sorted_table(digits, [0, 1, 100, 2047, 4094])


def test_acceptance_table_exact_entries() -> None:
    sigma_squared = Fraction(100)
    table = acceptance_table(sigma_squared)
    assert table.spacing == 1 and table.laplace_scale == 11
    for y in (0, 1, 9, 10, 50, table.entries - 1):
        lo, hi = table.thresholds.threshold_bounds(y, 128)
        assert abs(int(table.thresholds.floor64[y]) - (lo >> 64)) <= 1
        assert abs(int(table.thresholds.ceil64_m1[y]) + 1 - (-((-hi) >> 64))) <= 1
        a = exp_decimal(-((y - table.center) ** 2) / (2 * sigma_squared))
        assert abs(int(table.thresholds.floor64[y]) - floor_scaled(a, 64)) <= 1


def test_acceptance_table_brackets_contain_every_value() -> None:
    sigma_squared = Fraction(10**12)  # σ = 10^6: brackets of m > 1 values
    table = acceptance_table(sigma_squared)
    m = table.spacing
    assert m > 1 and table.entries <= 2**16
    center_bracket = int(table.center) // m
    for k in (0, 1, center_bracket - 1, center_bracket, center_bracket + 1, table.entries - 1):
        for y in (k * m, k * m + m // 2, k * m + m - 1):
            lo, hi = table.thresholds.threshold_bounds(y, 128)
            # the bracket's words bound A(y) too: floor64/2^64 ≤ A(y) ≤ (ceil64_m1 + 1)/2^64
            assert int(table.thresholds.floor64[k]) << 64 <= hi
            assert (int(table.thresholds.ceil64_m1[k]) + 1) << 64 >= lo
    # the sentinel entry settles nothing
    assert table.thresholds.floor16[table.entries] == 0
    assert table.thresholds.ceil16[table.entries] == 2**16


# --- the vectorised comparison against brute force -----------------------------------------------


def test_sorted_thresholds_count_equals_brute_force() -> None:
    thresholds = [Fraction(k, 7) for k in range(1, 7)]
    lows = [rational_bounds(t, 128)[0] for t in thresholds]
    highs = [rational_bounds(t, 128)[1] for t in thresholds]
    table = SortedThresholds(lows, highs, 128, lambda k, prec: rational_bounds(thresholds[k], prec))
    prefixes = [0, MAX64, 2**63, 2**64 // 7 - 1, 2**64 // 7 + 1, 3 * 2**64 // 7 + 5]
    prefixes += [int(x) for x in np.frombuffer(bytes(range(256)) * 8, dtype="<u8")[:40]]
    for u in prefixes:
        bits = ScriptedBits(*prefix_script(u))
        count = int(table.count(1, bits)[0])
        if table.guide[u >> 48] >= 0:
            bits.chunks.clear()  # settled by the first 16 bits: the 64-bit word was not needed
        assert bits.done
        v = Fraction(u, 2**64)
        assert count == sum(t <= v for t in thresholds)


def test_indexed_thresholds_equal_brute_force() -> None:
    thresholds = [Fraction(0), Fraction(1, 3), Fraction(1, 2), Fraction(1)]
    lows = [rational_bounds(t, 128)[0] for t in thresholds]
    highs = [rational_bounds(t, 128)[1] for t in thresholds]
    table = IndexedThresholds(
        lows, highs, 128, lambda k, prec: rational_bounds(thresholds[k], prec)
    )
    for k, t in enumerate(thresholds):
        for u in (0, 2**62, 2**63 - 1, 2**63, MAX64):
            out = table.less(np.array([k]), 1, lambda n, u=u: prefix_script(u)[0 if n == 2 else 1])
            v_low, v_high = Fraction(u, 2**64), Fraction(u + 1, 2**64)
            if v_high <= t:
                assert out[0]
            elif v_low >= t:
                assert not out[0]


# --- the lazy paths, forced ----------------------------------------------------------------------


def test_lazy_uniform_reads_words_until_settled() -> None:
    third = Fraction(1, 3)
    u = 2**64 // 3  # the 64-bit floor of 1/3: unsettled
    v = LazyUniform(u, 64, ScriptedBits((2**64 // 3).to_bytes(8, "little"), bytes(8)))
    assert v.less_than(lambda prec: rational_bounds(third, prec))
    assert v.nbits == 192


@pytest.mark.parametrize(("tail", "expected"), [((0,), 1), ((MAX64,), 0)])
def test_bernoulli_refines_an_ambiguous_prefix(tail: tuple[int, ...], expected: int) -> None:
    u = 2**64 // 3  # first 64 bits equal ⌊2^64/3⌋: 1/3 is inside the prefix interval
    bits = ScriptedBits(*prefix_script(u, *tail))
    assert bernoulli(Fraction(1, 3), 1, _bits=bits).tolist() == [expected]
    assert bits.done


@pytest.mark.parametrize(("last", "expected"), [(0, 1), (MAX64, 0)])
def test_bernoulli_refines_twice(last: int, expected: int) -> None:
    u = 2**64 // 3
    bits = ScriptedBits(*prefix_script(u, 2**64 // 3, last))  # 128 bits still equal to 1/3's
    assert bernoulli(Fraction(1, 3), 1, _bits=bits).tolist() == [expected]
    assert bits.done


@pytest.mark.parametrize("gamma", [Fraction(1, 2), Fraction(23, 10), Fraction(7)])
@pytest.mark.parametrize("way", ["below", "above", "twice-below", "twice-above"])
def test_bernoulli_exp_refines_both_ways(gamma: Fraction, way: str) -> None:
    t = exp_decimal(-gamma)
    u = floor_scaled(t, 64)
    word2 = floor_scaled(t, 128) & MAX64  # bits 65–128 of e^(−γ)
    last = 0 if way.endswith("below") else MAX64
    words = (word2, last) if way.startswith("twice") else (last,)
    bits = ScriptedBits(*prefix_script(u, *words))
    prefix, nbits = u, 64
    for w in words:
        prefix, nbits = (prefix << 64) | w, nbits + 64
    expected = decide(t, prefix, nbits)
    assert expected is (way.endswith("below"))
    assert bernoulli_exp(gamma, 1, _bits=bits).tolist() == [int(expected)]
    assert bits.done


@pytest.mark.parametrize(("last", "expected_x"), [(0, 0), (MAX64, 1)])
def test_discrete_laplace_refines_a_threshold_both_ways(last: int, expected_x: int) -> None:
    scale = Fraction(10)
    table = laplace_table(scale)
    j = table.half_width + 1  # T_j = P(X ≤ 0) = 1/(1 + e^(−1/10))
    with localcontext() as ctx:
        ctx.prec = 600
        t = 1 / (1 + exp_decimal(-1 / scale))
    u = floor_scaled(t, 64)
    assert int(table.thresholds.floor64[j]) == u
    assert table.thresholds.guide[u >> 48] == -1  # the first 16 bits do not settle it
    bits = ScriptedBits(*prefix_script(u, last))
    assert decide(t, (u << 64) | last, 128) is (last == 0)
    assert discrete_laplace(scale, 1, _bits=bits).tolist() == [expected_x]
    assert bits.done


@pytest.mark.parametrize(
    ("sigma_squared", "y"), [(Fraction(100), 13), (Fraction(10**12), 1_234_567)]
)
@pytest.mark.parametrize("last", [0, MAX64])
def test_gaussian_acceptance_refines_with_the_exact_value(
    sigma_squared: Fraction, y: int, last: int
) -> None:
    table = acceptance_table(sigma_squared)
    a = exp_decimal(-((y - table.center) ** 2) / (2 * sigma_squared))
    u = floor_scaled(a, 64)
    bits = ScriptedBits(*prefix_script(u, last))
    bracket = y // table.spacing
    out = table.thresholds.less(np.array([bracket]), 1, bits, keys=np.array([y]))
    assert out.tolist() == [decide(a, (u << 64) | last, 128)]
    assert bits.done


def test_gaussian_acceptance_beyond_the_table_uses_exact_bounds() -> None:
    sigma_squared = Fraction(100)
    table = acceptance_table(sigma_squared)
    y = table.entries + 5  # mapped to the sentinel entry
    a = exp_decimal(-((y - table.center) ** 2) / (2 * sigma_squared))  # ≈ e^−60
    assert decide(a, 0, 64) is None  # V < 2^−64 does not settle V < e^−60 ≈ 2^−86.6
    for words, expected in (((0,), True), ((), False)):
        u = 0 if words else 1
        bits = ScriptedBits(*prefix_script(u, *words))
        out = table.thresholds.less(np.array([table.entries]), 1, bits, keys=np.array([y]))
        assert out.tolist() == [expected]
        assert bits.done
