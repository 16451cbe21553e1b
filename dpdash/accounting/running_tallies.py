"""The running totals of the accountants whose totals are functions of sums (basic, zCDP, advanced, RDP,
optimal): each kept as exact integer accumulators (every double is an integer multiple of 2⁻¹⁰⁷⁴) and
rounded once when read, so that they equal the accountants' own totals to the last bit (``running``)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

import numpy as np

from dpdash.accounting.accountant import (
    Accountant,
)
from dpdash.accounting.advanced import AdvancedComposition, advanced_terms, epsilon_from_sums
from dpdash.accounting.events import PrivacyEvent
from dpdash.accounting.optimal import (
    OptimalComposition,
    heterogeneous_from_sums,
    heterogeneous_terms,
    kov_epsilon_cached,
)
from dpdash.accounting.rdp import RDPAccountant
from dpdash.accounting.zcdp import ZCDPAccountant, zcdp_epsilon

__all__ = []


_SCALE = 1074  # every finite double is an integer multiple of 2**-1074


# ---- exact sums ------------------------------------------------------------------------------------
def _fixed(x: float) -> int:
    """x·2^1074, exactly (x finite)."""
    numerator, denominator = float(x).as_integer_ratio()
    return numerator << (_SCALE + 1 - denominator.bit_length())


class _ExactSums:
    """Exact sums of float terms, several side by side; ``values()`` rounds each once (as ``math.fsum``)."""

    __slots__ = ("_acc", "_inf")

    def __init__(self, width: int) -> None:
        self._acc = [0] * width
        self._inf = [0] * width  # +∞ terms minus removed ones (the terms here are never −∞ or NaN)

    def copy(self) -> _ExactSums:
        out = _ExactSums(0)
        out._acc, out._inf = list(self._acc), list(self._inf)
        return out

    def add(self, terms: Iterable[float], sign: int = 1) -> None:
        for i, term in enumerate(terms):
            if math.isinf(term):
                self._inf[i] += sign
            else:
                self._acc[i] += sign * _fixed(term)

    def values(self) -> list[float]:
        out = []
        for acc, inf in zip(self._acc, self._inf, strict=True):
            if inf > 0:
                out.append(math.inf)
                continue
            try:
                out.append(acc / (1 << _SCALE))  # int / int is correctly rounded
            except OverflowError:
                out.append(math.inf if acc > 0 else -math.inf)
        return out


# ---- per-path tallies --------------------------------------------------------------------------------
class _Tally:
    """An accountant's sums over one path's settings; ``update`` when a setting's count changes."""

    def update(self, setting: PrivacyEvent, old: int, new: int) -> None:
        raise NotImplementedError

    def copy(self) -> _Tally:
        raise NotImplementedError

    def epsilon(self, target_delta: float) -> float:
        raise NotImplementedError

    def settle(self) -> None:
        """Compose what is pending, so that copies share that work (a no-op for sums)."""


class _TermTally(_Tally):
    """Sums of per-setting terms terms(setting, count), replaced when the count changes."""

    def __init__(self, width: int) -> None:
        self.sums = _ExactSums(width)

    def terms(self, setting: PrivacyEvent, count: int) -> Iterable[float]:
        raise NotImplementedError

    def update(self, setting: PrivacyEvent, old: int, new: int) -> None:
        if old:
            self.sums.add(self.terms(setting, old), -1)
        if new:
            self.sums.add(self.terms(setting, new))

    def copy(self) -> _Tally:
        out = object.__new__(type(self))
        out.__dict__.update(self.__dict__)
        out.sums = self.sums.copy()
        return out


class _ZCDPTally(_TermTally):
    def __init__(self, accountant: ZCDPAccountant) -> None:
        super().__init__(1)
        self.accountant = accountant

    def terms(self, setting: PrivacyEvent, count: int) -> Iterable[float]:
        return (float(setting.rho) * count,)  # type: ignore[arg-type]

    def epsilon(self, target_delta: float) -> float:
        return float(zcdp_epsilon(self.sums.values()[0], target_delta, self.accountant.conversion))


class _AdvancedTally(_TermTally):
    def __init__(self, accountant: AdvancedComposition) -> None:
        super().__init__(4)

    def terms(self, setting: PrivacyEvent, count: int) -> Iterable[float]:
        return advanced_terms(float(setting.epsilon), float(setting.delta), count)  # type: ignore[arg-type]

    def epsilon(self, target_delta: float) -> float:
        return epsilon_from_sums(*self.sums.values(), target_delta)


class _RDPTally(_TermTally):
    def __init__(self, accountant: RDPAccountant) -> None:
        super().__init__(len(accountant.orders))
        self.accountant = accountant

    def terms(self, setting: PrivacyEvent, count: int) -> Iterable[float]:
        return (count * self.accountant.setting_curve(setting)).tolist()

    def epsilon(self, target_delta: float) -> float:
        return self.accountant.epsilon_of_curve(np.array(self.sums.values()), target_delta)


class _OptimalTally(_Tally):
    """``OptimalComposition._epsilon``'s inputs: guarantees merged by (ε, δ), their sums, count and maxima."""

    def __init__(self, accountant: OptimalComposition) -> None:
        self.groups: Counter[tuple[float, float]] = Counter()
        self.sums = _ExactSums(4)

    def copy(self) -> _Tally:
        out = object.__new__(_OptimalTally)
        out.groups, out.sums = Counter(self.groups), self.sums.copy()
        return out

    def update(self, setting: PrivacyEvent, old: int, new: int) -> None:
        e, d = float(setting.epsilon), float(setting.delta)  # type: ignore[arg-type]
        before = self.groups[(e, d)]
        after = before + new - old
        if before:
            self.sums.add(heterogeneous_terms(e, d, before), -1)
        if after:
            self.sums.add(heterogeneous_terms(e, d, after))
            self.groups[(e, d)] = after
        else:
            del self.groups[(e, d)]

    def epsilon(self, target_delta: float) -> float:
        if len(self.groups) == 1:
            ((e, d), k) = next(iter(self.groups.items()))
            return kov_epsilon_cached(e, d, k, target_delta)
        k_total = sum(self.groups.values())
        max_epsilon, max_delta = max(e for e, _ in self.groups), max(d for _, d in self.groups)
        worst = kov_epsilon_cached(max_epsilon, max_delta, k_total, target_delta)
        return min(worst, heterogeneous_from_sums(*self.sums.values(), target_delta))


_TALLIES: dict[type[Accountant], type[_Tally]] = {
    ZCDPAccountant: _ZCDPTally,
    AdvancedComposition: _AdvancedTally,
    RDPAccountant: _RDPTally,
    OptimalComposition: _OptimalTally,
}


def _basic_update(sums: _ExactSums, setting: PrivacyEvent, old: int, new: int) -> None:
    if setting.epsilon is None or setting.delta is None:
        return  # basic composition refuses it (and is not asked for this history again)
    e, d = float(setting.epsilon), float(setting.delta)
    if old:
        sums.add((e * old, d * old), -1)
    sums.add((e * new, d * new))
