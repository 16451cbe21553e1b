"""What every privacy event is (``PrivacyEvent``): a frozen record of one release's privacy guarantee, with
its labels (query, partition), its setting (the event without its labels) and its JSON; and the helpers
the event types share."""

from __future__ import annotations

import functools
import json
import math
from dataclasses import MISSING, dataclass, fields
from typing import TYPE_CHECKING, Any, ClassVar

from dpdash import _validation as check
from dpdash.errors import ParameterError, ParameterTypeError

__all__ = ["PrivacyEvent", "canonical_json"]


# A stated (ε, δ) of a Gaussian-type event is accepted when the exact δ(ε) is within this relative slack of
# δ: calibration is exact to the last bit, so only floating-point noise in re-evaluating δ(ε) is forgiven.
_PROFILE_SLACK = 1e-9


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces: the same value always gives the same text (and digest)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False, ensure_ascii=False)


def _label(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise ParameterTypeError(f"{name} must be a string, got {name}={value!r} ({type(value).__name__})")
    return value


def _partition(value: object) -> tuple[str, str] | None:
    if value is None:
        return None
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(isinstance(v, str) for v in value):
        by, part = value
        if by and part:
            return (by, part)
    raise ParameterError(
        "partition must be None or a pair of non-empty strings (by, part), e.g. ('region', 'North'), "
        f"got partition={value!r}"
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class PrivacyEvent:
    """Base class of the events: one release, its privacy-relevant parameters and its labels.

    Attributes:
        query: what was released, for people (e.g. "count of patients by ward").
        partition: ``None`` if the release read the whole dataset, else ``(by, part)``: it read only the
            records whose attribute ``by`` equals ``part`` (see the module docstring).

    Subclasses define ``family`` (the key in JSON), ``epsilon``, ``delta`` and ``rho`` (``None`` where the
    event has no such guarantee) and ``mechanism`` (a name for people).
    """

    family: ClassVar[str] = ""

    query: str = ""
    partition: tuple[str, str] | None = None

    def _check_labels(self) -> None:
        object.__setattr__(self, "query", _label(self.query, "query"))
        object.__setattr__(self, "partition", _partition(self.partition))

    # Each subclass defines these as fields or properties. They are not defined here: a dataclass would
    # take a base-class property for the default value of a subclass field of the same name.
    if TYPE_CHECKING:

        @property
        def epsilon(self) -> float | None:
            """ε of the (ε, δ)-DP guarantee the release was made under; ``None`` if it has none."""

        @property
        def delta(self) -> float | None:
            """δ of that guarantee (0 for pure DP); ``None`` if the event has no (ε, δ) guarantee."""

        @property
        def rho(self) -> float | None:
            """ρ of a ρ-zCDP guarantee (Bun & Steinke 2016); ``None`` if the event implies none."""

        @property
        def mechanism(self) -> str:
            """The mechanism's name, for people."""

    @property
    def setting(self) -> PrivacyEvent:
        """This event without its labels (query, partition, a free-text mechanism name): events with equal
        settings have the same privacy loss, so an accountant composes them by count."""
        names, labels = _layout(type(self))
        if all(getattr(self, name) == value for name, value in labels.items()):
            return self
        # A copy without re-validation: the parameters were checked when this event was built.
        copy = object.__new__(type(self))
        for name in names:
            object.__setattr__(copy, name, labels[name] if name in labels else getattr(self, name))
        return copy

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict: ``{"type": family, <parameters>, <derived values>, "query", "partition"}``.

        Derived values (a scale, ρ) are included for people reading the JSON; ``event_from_dict`` checks
        that they agree with the parameters.
        """
        out: dict[str, Any] = {"type": self.family}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    def describe(self) -> str:
        """One line for people, e.g. ``Laplace, ε = 0.5 (Δ₁ = 1, b = 2)``."""
        raise NotImplementedError


@dataclass(frozen=True, slots=True, kw_only=True)
class _PureEvent(PrivacyEvent):
    """An event of an (ε, 0)-DP release (subclasses have an ``epsilon``): δ = 0, and ρ = ε²/2, since pure
    ε-DP implies (ε²/2)-zCDP (Bun & Steinke 2016, Prop. 1.4)."""

    @property
    def delta(self) -> float:
        return 0.0

    @property
    def rho(self) -> float:
        return self.epsilon * self.epsilon / 2.0


def _integer_sensitivity(value: object) -> int:
    d = check.positive_finite(value, "sensitivity")
    if d != math.floor(d):
        raise ParameterError(f"sensitivity must be an integer >= 1, got sensitivity={value!r}")
    return int(d)


def _smallest_epsilon(profile: Any, delta: float) -> float:
    """The smallest ε ≥ 0 with profile(ε) ≤ δ, for a decreasing profile, to the last bit."""
    from dpdash._search import bracket, smallest_true

    def ok(e: float) -> bool:
        return profile(e) <= delta

    if ok(0.0):
        raise ParameterError(
            f"the noise is so large that the release is (0, {delta!r})-DP; no ε > 0 to state"
        )
    lo, hi = bracket(ok, 1.0, lower=1e-300, upper=1e300, what="epsilon")
    return smallest_true(ok, lo, hi)


@functools.cache
def _layout(cls: type[PrivacyEvent]) -> tuple[tuple[str, ...], dict[str, Any]]:
    """An event type's field names, and the labels its ``setting`` drops (with the value they take)."""
    labels = {
        f.name: f.default
        for f in fields(cls)
        if f.name in ("query", "partition") or (f.name == "mechanism" and f.default is not MISSING)
    }
    return tuple(f.name for f in fields(cls)), labels
