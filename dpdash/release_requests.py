"""Release requests: an analyst asks for a release, an owner approves it (and so makes it) or declines it.

A request is what a release needs, and nothing of the table: the query spec (with its public facts), the
mechanism, ε, δ, the confidence and the post-processing, for one table (its identity), who asked and when.
An owner's approval is their ordinary release of exactly that request, recorded in the ledger under the
idempotency key ``request.request_id`` (so it spends once, however often it is sent); a decline records a
reason. Each request and each decision is written once and never changed (a decision is refused if one is
there already), in the workspace beside the tables it is about (``<workspace>/requests/``; folder 0700,
files 0600), by writing a temporary file and linking it into place, which fails if the name is taken: two
owners deciding at once, one decision stands.

>>> import tempfile
>>> from dpdash.queries import Count
>>> with tempfile.TemporaryDirectory() as folder:
...     store = RequestStore(folder)
...     asked = store.submit(dataset="sha256:" + "ab" * 32, table_name="survey", query=Count().to_dict(),
...                          mechanism="geometric", epsilon=0.1, delta=0.0, confidence=0.95, postprocess=(),
...                          requested_by="ann@example.org")
...     [r.uid for r, d in store.requests("sha256:" + "ab" * 32) if d is None] == [asked.uid]
...     store.decide(asked.uid, approved=False, by="bob@example.org", reason="too much ε").approved
True
False
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dpdash.errors import DPDashError

__all__ = ["Decision", "ReleaseRequest", "RequestError", "RequestStore"]

FORMAT = "dpdash-release-request-1"
#: The largest request or decision file read back (a query spec with thousands of categories fits).
MAX_RECORD_BYTES = 5_000_000
_UID = re.compile(r"[0-9a-f]{32}")
#: What a reason or a note may hold: enough for a sentence or two.
MAX_TEXT = 2_000


class RequestError(DPDashError):
    """A request or decision cannot be written or read, or was decided already; the message says which."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _text(value: object, name: str, limit: int = MAX_TEXT) -> str:
    if not isinstance(value, str):
        raise RequestError(f"{name} must be text, got {type(value).__name__}")
    if len(value) > limit:
        raise RequestError(f"{name} is longer than {limit:,} characters")
    return value


@dataclass(frozen=True, slots=True)
class ReleaseRequest:
    """An analyst's request for one release of one table (see the module docstring)."""

    uid: str
    dataset: str
    table_name: str
    query: Mapping[str, Any]
    mechanism: str
    epsilon: float
    delta: float
    confidence: float
    postprocess: tuple[str, ...]
    requested_by: str
    requested_at: str
    note: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.uid, str) or not _UID.fullmatch(self.uid):
            raise RequestError(f"a request's uid is 32 hex digits, got {self.uid!r}")
        for name in ("dataset", "table_name", "mechanism", "requested_by", "requested_at", "note"):
            _text(getattr(self, name), name)
        if not isinstance(self.query, Mapping) or "type" not in self.query:
            raise RequestError("a request's query is a query spec (Query.to_dict())")
        for name in ("epsilon", "delta", "confidence"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise RequestError(f"a request's {name} must be a finite number, got {value!r}")
        steps = tuple(self.postprocess)
        if not all(isinstance(step, str) for step in steps):
            raise RequestError("a request's post-processing steps are text")
        object.__setattr__(self, "postprocess", steps)

    @property
    def request_id(self) -> str:
        """The ledger's idempotency key of the release that answers this request."""
        return f"dpdash-request:{self.uid}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT, "uid": self.uid, "dataset": self.dataset, "table_name": self.table_name,
            "query": dict(self.query), "mechanism": self.mechanism, "epsilon": self.epsilon,
            "delta": self.delta, "confidence": self.confidence, "postprocess": list(self.postprocess),
            "requested_by": self.requested_by, "requested_at": self.requested_at, "note": self.note,
        }  # fmt: skip

    @classmethod
    def from_dict(cls, data: Any) -> ReleaseRequest:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise RequestError(f"not a dpdash release request ({FORMAT})")
        try:
            return cls(**{k: v for k, v in data.items() if k != "format"})
        except TypeError as error:
            raise RequestError(f"a release request with unexpected fields: {error}") from None


@dataclass(frozen=True, slots=True)
class Decision:
    """An owner's answer to a request: approved (``entry``: the uid of the release's first ledger entry)
    or declined (with a ``reason``)."""

    uid: str
    approved: bool
    by: str
    at: str
    reason: str = ""
    entry: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT + "-decision", "uid": self.uid, "approved": self.approved, "by": self.by,
                "at": self.at, "reason": self.reason, "entry": self.entry}  # fmt: skip

    @classmethod
    def from_dict(cls, data: Any) -> Decision:
        if not isinstance(data, dict) or data.get("format") != FORMAT + "-decision":
            raise RequestError("not a dpdash release decision")
        approved, entry = data.get("approved"), data.get("entry")
        if not isinstance(approved, bool) or not (entry is None or isinstance(entry, str)):
            raise RequestError("a release decision says approved (true or false) and at most one entry")
        return cls(uid=_text(data.get("uid"), "uid"), approved=approved, by=_text(data.get("by"), "by"),
                   at=_text(data.get("at"), "at"), reason=_text(data.get("reason", ""), "reason"),
                   entry=entry)  # fmt: skip


class RequestStore:
    """Requests and decisions in a folder (``<workspace>/requests``), each file written once."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._path = Path(path).expanduser()

    @property
    def path(self) -> Path:
        return self._path

    def __repr__(self) -> str:
        return f"RequestStore({str(self._path)!r})"

    def _create(self, target: Path, record: Mapping[str, Any]) -> bool:
        """Write ``record`` to ``target`` unless it exists (``False`` then): a full temporary file, linked
        into place (a link never replaces a file), so a reader never sees half a record."""
        data = json.dumps(record, ensure_ascii=False, allow_nan=False, indent=1).encode("utf-8")
        try:
            self._path.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.chmod(self._path, 0o700)
            handle, temporary = tempfile.mkstemp(prefix=".tmp-", dir=self._path)
            try:
                with os.fdopen(handle, "wb") as out:
                    os.fchmod(out.fileno(), 0o600)
                    out.write(data)
                    out.flush()
                    os.fsync(out.fileno())
                try:
                    os.link(temporary, target)
                except FileExistsError:
                    return False
                return True
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
        except OSError as error:
            raise RequestError(
                f"cannot write {target.name} in {self._path} ({error.strerror or error}); nothing was "
                "recorded"
            ) from error

    def _read(self, target: Path) -> Any:
        try:
            if target.stat().st_size > MAX_RECORD_BYTES:
                raise RequestError(f"{target} is larger than a request can be")
            return json.loads(target.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
            raise RequestError(f"the request file {target} cannot be read ({error})") from error

    def submit(
        self,
        *,
        dataset: str,
        table_name: str,
        query: Mapping[str, Any],
        mechanism: str,
        epsilon: float,
        delta: float,
        confidence: float,
        postprocess: Sequence[str],
        requested_by: str,
        note: str = "",
    ) -> ReleaseRequest:
        """Record a new request (pending until an owner decides) and return it."""
        request = ReleaseRequest(
            uid=uuid.uuid4().hex, dataset=dataset, table_name=table_name, query=dict(query),
            mechanism=mechanism, epsilon=float(epsilon), delta=float(delta), confidence=float(confidence),
            postprocess=tuple(postprocess), requested_by=requested_by, requested_at=_now(), note=note,
        )  # fmt: skip
        if not self._create(self._path / f"{request.uid}.request.json", request.to_dict()):
            raise RequestError("a request with this uid exists already; nothing was recorded")
        return request

    def request(self, uid: str) -> ReleaseRequest:
        if not isinstance(uid, str) or not _UID.fullmatch(uid):
            raise RequestError(f"a request's uid is 32 hex digits, got {uid!r}")
        data = self._read(self._path / f"{uid}.request.json")
        if data is None:
            raise RequestError(f"no release request {uid}")
        return ReleaseRequest.from_dict(data)

    def decision(self, uid: str) -> Decision | None:
        data = self._read(self._path / f"{uid}.decision.json")
        return None if data is None else Decision.from_dict(data)

    def decide(
        self, uid: str, *, approved: bool, by: str, reason: str = "", entry: str | None = None
    ) -> Decision:
        """Record the decision on a request, once.

        Raises:
            RequestError: no such request, or it was decided already (the message says by whom).
        """
        self.request(uid)
        decision = Decision(uid=uid, approved=bool(approved), by=_text(by, "by"), at=_now(),
                            reason=_text(reason, "reason"), entry=entry)  # fmt: skip
        if not self._create(self._path / f"{uid}.decision.json", decision.to_dict()):
            earlier = self.decision(uid)
            what = "approved" if earlier is not None and earlier.approved else "declined"
            who = earlier.by if earlier is not None else "someone"
            raise RequestError(f"this request was {what} already, by {who}; nothing more was recorded")
        return decision

    def requests(self, dataset: str | None = None) -> list[tuple[ReleaseRequest, Decision | None]]:
        """Every request (of one table, or all), oldest first, each with its decision or ``None``."""
        if not self._path.is_dir():
            return []
        found = []
        for path in sorted(self._path.glob("*.request.json")):
            request = ReleaseRequest.from_dict(self._read(path))
            if dataset is None or request.dataset == dataset:
                found.append((request, self.decision(request.uid)))
        found.sort(key=lambda pair: (pair[0].requested_at, pair[0].uid))
        return found
