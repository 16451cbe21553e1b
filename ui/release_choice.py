"""A release as Query & release sets it up, and as an analyst's request asks for it: one value that the
previews, the owner's release, the analyst's request and the owner's approval all take."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dpdash.queries import Query, query_from_dict
from dpdash.release import MECHANISMS, mechanism_class

__all__ = ["ReleaseChoice"]

_KEY = {cls: key for key, cls in MECHANISMS.items()}


@dataclass(frozen=True, slots=True)
class ReleaseChoice:
    """The query, its mechanism (a class of ``dpdash.release.MECHANISMS``), ε, δ (0 or ``None``: none),
    the confidence of the ± and the post-processing steps: ``dpdash.release.release``'s arguments but the
    data."""

    query: Query
    mechanism: type
    epsilon: float
    delta: float | None
    confidence: float
    steps: tuple[str, ...]

    @classmethod
    def from_request(cls, planned: Mapping[str, Any]) -> ReleaseChoice:
        """The release an analyst's request asks for (``RequestRecord.request``)."""
        query, mechanism = query_from_dict(dict(planned["query"])), mechanism_class(planned["mechanism"])
        return cls(
            query, mechanism, planned["epsilon"], planned["delta"], planned["confidence"],
            tuple(planned["postprocess"]),
        )  # fmt: skip

    def request(self, note: str) -> dict[str, Any]:
        """The request an analyst sends for it (``Ledger.request_release``), with their note."""
        return {
            "query": self.query.to_dict(), "mechanism": _KEY[self.mechanism], "epsilon": self.epsilon,
            "delta": self.delta or None, "confidence": self.confidence, "postprocess": list(self.steps),
            "note": note,
        }  # fmt: skip

    def key(self, fingerprint: str) -> tuple[Any, ...]:
        """What a confirmation of this release on the table ``fingerprint`` is tied to: change any part of
        it and the confirmation lapses."""
        return (
            repr(self.query.to_dict()), self.mechanism.__name__, self.epsilon, self.delta, self.confidence,
            self.steps, fingerprint,
        )  # fmt: skip

    @property
    def cost(self) -> str:
        """What it spends, as people read it: "ε = …", and ", δ = …" with a δ."""
        return f"ε = {self.epsilon:g}{f', δ = {self.delta:g}' if self.delta else ''}"
