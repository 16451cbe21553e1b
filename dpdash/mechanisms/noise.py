"""What dpdash's own noise laws (the discrete Gaussian, the staircase) share: the methods of a frozen
scipy.stats distribution that do not depend on the law beyond its symmetry about 0."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod

import numpy as np

__all__ = ["SymmetricNoise"]


class SymmetricNoise(ABC):
    """Base class of a noise law symmetric about 0 on the whole line (or all the integers), offering
    scipy's ``mean``, ``std``, ``support`` and ``rvs`` from the subclass's ``var`` and ``_rvs``.

    >>> from dpdash.mechanisms import StaircaseNoise
    >>> noise = StaircaseNoise(epsilon=1.0, sensitivity=1.0, gamma=0.5)
    >>> noise.mean(), noise.support(), noise.rvs((2, 3), np.random.default_rng(0)).shape
    (0.0, (-inf, inf), (2, 3))
    """

    __slots__ = ()

    def mean(self) -> float:
        """E[X] = 0, by symmetry."""
        return 0.0

    @abstractmethod
    def var(self) -> float:
        """E[X²]."""

    def std(self) -> float:
        """√Var[X]."""
        return math.sqrt(self.var())

    def support(self) -> tuple[float, float]:
        return (-math.inf, math.inf)

    def rvs(
        self, size: int | tuple[int, ...] = 1, random_state: np.random.Generator | None = None
    ) -> np.ndarray:
        """Fast numpy draws of shape ``size`` (previews only), as scipy's ``rvs``; ``random_state=None``
        draws a fresh unseeded generator."""
        rng = random_state if random_state is not None else np.random.default_rng()
        shape = (size,) if isinstance(size, int) else tuple(size)
        return self._rvs(rng, shape)

    @abstractmethod
    def _rvs(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        """Draws of the given shape from numpy's generator."""
