"""The local workspace: uploaded tables and their declared facts, kept on disk beside the ledger.

A reload or a server restart must not lose the table a budget was set for, nor the facts declared for
it. The workspace is a folder (``$DPDASH_WORKSPACE``; else ``<ledger path>.workspace/`` beside the
ledger, ``default_workspace_path()``) holding, per table, under ``tables/<key>/``:

- ``source.bin``: the uploaded file's original bytes (never for a built-in example: those are rebuilt,
  nor for a connected table: that is opened again where it lives);
- ``synthetic-<sha256>.csv``: the synthetic tables released from it (``store_synthetic``), by the
  SHA-256 of their CSV that their ledger record states, each with its data card as the owner last chose
  it (``synthetic-<sha256>.card.json``, ``store_synthetic_card``: with the preview's quality figures, NOT
  PRIVATE, only when the owner included them);
- ``table.json``: the file name, the owner-given name, the table's identity (the budget's key,
  ``dpdash.ledger.fingerprint`` of the table as loaded), the type changes applied since loading
  (``coercions``, in order, and ``lossy``), the declared public facts (bounds, categories, unit of
  privacy, notes) and, for an example, its name; for a connected table, where it lives
  (``dpdash.engines.SourceSpec``: a path, a database file, a password-free PostgreSQL URL, a Spark master,
  and a table name; never a password);

and ``active.json``, which table the app opens first. The key of a table is the hex digest of its
identity, so re-uploading the same content (in any format, any column order) finds the same entry.

It holds sensitive data, like the ledger: the folder is created with mode 0700 and every file with 0600,
and every write goes to a temporary file first and then replaces the old one (``os.replace``), so a crash
never leaves half a file. A table's bytes are limited as uploads are (``MAX_UPLOAD_BYTES``). "Forget"
deletes a table's folder; its budget history stays in the ledger, which is append-only.

>>> import tempfile
>>> from dpdash.datasets import PublicFacts
>>> from dpdash.facts import Facts
>>> key = "sha256:" + "ab" * 32
>>> with tempfile.TemporaryDirectory() as folder:
...     ws = Workspace(folder)
...     _ = ws.store_upload(key, filename="t.csv", name="t", data=b"id,x\\n1,2\\n")
...     _ = ws.update(key, facts=PublicFacts(bounds={"x": (0, 5)}, unit=Facts(rows_per_person=2)))
...     ws.set_active(key)
...     ws.active().facts.unit.rows_per_person, ws.source_bytes(key)
(2, b'id,x\\n1,2\\n')
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dpdash.datasets import PublicFacts
from dpdash.engines.spec import SourceSpec
from dpdash.errors import DPDashError, ParameterError, ParameterTypeError
from dpdash.facts import Bounds, Facts
from dpdash.loading import MAX_UPLOAD_BYTES

__all__ = [
    "FORMAT",
    "StoredTable",
    "Workspace",
    "WorkspaceError",
    "default_workspace_path",
    "facts_from_dict",
    "facts_to_dict",
]

FORMAT = "dpdash-workspace-table-1"
#: The largest ``table.json`` read back (declared facts of a 16 384-column table fit easily).
MAX_RECORD_BYTES = 20_000_000
_KEY = re.compile(r"[0-9a-f]{16,128}")


class WorkspaceError(DPDashError):
    """The workspace cannot be read or written; the message says what to do."""


def default_workspace_path() -> Path:
    """``$DPDASH_WORKSPACE``; else the ledger's path with ``.workspace`` added (beside the ledger); for a
    PostgreSQL ledger, ``workspace`` in dpdash's folder on this machine (``local_data_folder()``)."""
    configured = os.environ.get("DPDASH_WORKSPACE", "").strip()
    if configured:
        return Path(configured).expanduser()
    from dpdash.ledger.location import default_ledger_location, local_data_folder

    ledger = default_ledger_location()
    if isinstance(ledger, str):  # a PostgreSQL ledger: the workspace stays on this machine
        return local_data_folder() / "workspace"
    return ledger.with_name(ledger.name + ".workspace")


# ---- public facts as JSON ---------------------------------------------------------------------------
def facts_to_dict(facts: PublicFacts) -> dict[str, Any]:
    """Declared public facts as plain JSON data (read back by ``facts_from_dict``)."""
    return {
        "bounds": {c: [b.lower, b.upper] for c, b in facts.bounds.items()},
        "categories": {c: list(values) for c, values in facts.categories.items()},
        "unit": facts.unit.to_dict(),
        "notes": dict(facts.notes),
        "group_bounds": {c: b.to_list() for c, b in facts.group_bounds.items()},
    }


def facts_from_dict(data: Any) -> PublicFacts:
    """``PublicFacts`` from ``facts_to_dict``'s data, validated (``ParameterError`` names what is wrong)."""
    if not isinstance(data, dict):
        raise ParameterTypeError(f"facts must be a JSON object, got {type(data).__name__}")
    bounds = data.get("bounds", {})
    categories = data.get("categories", {})
    unit = data.get("unit", {})
    notes = data.get("notes", {})
    group_bounds = data.get("group_bounds", {})
    if not all(isinstance(x, dict) for x in (bounds, categories, unit, notes, group_bounds)):
        raise ParameterTypeError(
            "facts' bounds, categories, unit, notes and group bounds must be JSON objects"
        )
    return PublicFacts(
        bounds={str(c): Bounds.of(tuple(v) if isinstance(v, list) else v, str(c)) for c, v in bounds.items()},
        categories={str(c): v for c, v in categories.items()},
        unit=Facts.from_dict(unit),
        notes={str(c): str(v) for c, v in notes.items()},
        group_bounds={str(c): v for c, v in group_bounds.items()},
    )


@dataclass(frozen=True, slots=True)
class StoredTable:
    """One table kept in the workspace (its bytes, if an upload, are read with ``Workspace.source_bytes``).

    Attributes:
        identity: the table's identity, the budget's key.
        name: the owner-given name.
        filename: the uploaded file's name ("" for an example).
        example: the built-in example's name, or ``None`` for an upload.
        connection: where a connected table lives (no password), or ``None``.
        coercions: type changes applied since loading, in order, as (column, kind).
        lossy: whether values that did not convert became missing.
        facts: the declared public facts.
        saved_at: when it was last written (UTC, ISO 8601).
        n_bytes: the size of the stored file (0 for an example or a connected table).
        names: a connected table's names from what it reads (``dpdash.engines.Source.names``), which
            roles match before it is opened again.
    """

    identity: str
    name: str
    filename: str = ""
    example: str | None = None
    coercions: tuple[tuple[str, str], ...] = ()
    lossy: bool = False
    facts: PublicFacts = field(default_factory=PublicFacts)
    saved_at: str = ""
    n_bytes: int = 0
    connection: SourceSpec | None = None
    names: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "identity": self.identity,
            "name": self.name,
            "filename": self.filename,
            "example": self.example,
            "coercions": [list(c) for c in self.coercions],
            "lossy": self.lossy,
            "facts": facts_to_dict(self.facts),
            "saved_at": self.saved_at,
            "n_bytes": self.n_bytes,
            "connection": None if self.connection is None else self.connection.to_dict(),
            "names": list(self.names),
        }

    @classmethod
    def from_dict(cls, data: Any) -> StoredTable:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ParameterError(f"not a dpdash workspace record (its 'format' is not {FORMAT!r})")
        coercions = data.get("coercions", [])
        if not isinstance(coercions, list) or not all(
            isinstance(c, list) and len(c) == 2 and all(isinstance(x, str) for x in c) for c in coercions
        ):
            raise ParameterError("its coercions must be a list of [column, kind] pairs")
        example = data.get("example")
        connection = data.get("connection")
        for key, value in (("identity", data.get("identity")), ("name", data.get("name"))):
            if not isinstance(value, str) or not value:
                raise ParameterError(f"its {key} must be a non-empty string, got {value!r}")
        return cls(
            identity=data["identity"],
            name=data["name"],
            filename=str(data.get("filename", "")),
            example=None if example is None else str(example),
            coercions=tuple((c[0], c[1]) for c in coercions),
            lossy=bool(data.get("lossy", False)),
            facts=facts_from_dict(data.get("facts", {})),
            saved_at=str(data.get("saved_at", "")),
            n_bytes=int(data.get("n_bytes", 0)),
            connection=None if connection is None else SourceSpec.from_dict(connection),
            names=tuple(str(name) for name in data.get("names", ()) if isinstance(name, str)),
        )


def _key(identity: str) -> str:
    """The folder name of a table: the hex part of its identity (``sha256:<hex>``)."""
    if not isinstance(identity, str):
        raise ParameterTypeError(f"identity must be a string, got {type(identity).__name__}")
    digest = identity.split(":", 1)[-1].lower()
    if not _KEY.fullmatch(digest):
        raise ParameterError(f"identity must be 'sha256:<hex digits>', got identity={identity!r}")
    return digest


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Workspace:
    """The workspace folder (see the module docstring).

    Args:
        path: the folder; ``None`` for ``default_workspace_path()``. Created (0700) on the first write.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self._path = Path(path).expanduser() if path is not None else default_workspace_path()

    @property
    def path(self) -> Path:
        return self._path

    def __repr__(self) -> str:
        return f"Workspace({str(self._path)!r})"

    # ---- files ----------------------------------------------------------------------------------
    def _folder(self, identity: str) -> Path:
        return self._path / "tables" / _key(identity)

    def _prepare(self, folder: Path) -> None:
        try:
            for part in (self._path, self._path / "tables", folder):
                part.mkdir(mode=0o700, exist_ok=True)
                os.chmod(part, 0o700)
        except OSError as error:
            raise WorkspaceError(
                f"the workspace folder {self._path} cannot be written ({error.strerror or error}): set "
                "DPDASH_WORKSPACE to a folder you can write, or free some space"
            ) from error

    def _write(self, target: Path, data: bytes) -> None:
        """Atomically: a temporary file (0600) in the same folder, flushed, then ``os.replace``."""
        self._prepare(target.parent)
        try:
            handle, temporary = tempfile.mkstemp(prefix=".tmp-", dir=target.parent)
            try:
                with os.fdopen(handle, "wb") as out:
                    os.fchmod(out.fileno(), 0o600)
                    out.write(data)
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(temporary, target)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise
        except OSError as error:
            raise WorkspaceError(
                f"cannot write {target} in the workspace ({error.strerror or error}); nothing was changed"
            ) from error

    def _read_json(self, target: Path) -> Any:
        try:
            size = target.stat().st_size
            if size > MAX_RECORD_BYTES:
                raise WorkspaceError(f"{target} is {size:,} bytes, more than a workspace record can be")
            return json.loads(target.read_text(encoding="utf-8"))
        except (FileNotFoundError, NotADirectoryError):
            return None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
            raise WorkspaceError(
                f"the workspace file {target} cannot be read ({error}); use 'Forget this table' or delete "
                "the file"
            ) from error

    def _save(self, table: StoredTable) -> StoredTable:
        table = replace(table, saved_at=_now())
        text = json.dumps(table.to_dict(), ensure_ascii=False, allow_nan=False, indent=1)
        self._write(self._folder(table.identity) / "table.json", text.encode("utf-8"))
        return table

    # ---- tables ---------------------------------------------------------------------------------
    def store_upload(self, identity: str, *, filename: str, name: str, data: bytes) -> StoredTable:
        """Keep an uploaded file's bytes and a fresh record (no type changes, facts as declared later).

        An entry for the same identity keeps its name and facts (the same people, uploaded again)."""
        if not isinstance(data, (bytes, bytearray)):
            raise ParameterTypeError(f"data must be the file's bytes, got {type(data).__name__}")
        if len(data) > MAX_UPLOAD_BYTES:
            raise ParameterError(
                f"the file is {len(data):,} bytes, above the upload limit of {MAX_UPLOAD_BYTES:,} bytes"
            )
        before = self.table(identity)
        self._write(self._folder(identity) / "source.bin", bytes(data))
        kept = before if before is not None else StoredTable(identity, name)
        return self._save(
            replace(kept, filename=filename, example=None, connection=None, coercions=(), lossy=False,
                    n_bytes=len(data))
        )

    def store_connection(
        self, identity: str, *, connection: SourceSpec, name: str, names: tuple[str, ...] = ()
    ) -> StoredTable:
        """Record a connected table: where it lives (no password, no data) and the names roles match
        (``names``). An entry for the same identity keeps its name and facts."""
        if not isinstance(connection, SourceSpec):
            raise ParameterTypeError(f"connection must be a SourceSpec, got {type(connection).__name__}")
        before = self.table(identity)
        kept = before if before is not None else StoredTable(identity, name)
        return self._save(replace(kept, filename="", example=None, connection=connection, coercions=(),
                                  lossy=False, n_bytes=0, names=tuple(names)))  # fmt: skip

    def store_example(self, identity: str, *, example: str, name: str, facts: PublicFacts) -> StoredTable:
        """Record a built-in example (its name and facts; no bytes: it is rebuilt from dpdash)."""
        before = self.table(identity)
        if before is not None:
            return before
        return self._save(StoredTable(identity, name, example=example, facts=facts))

    def update(
        self,
        identity: str,
        *,
        name: str | None = None,
        facts: PublicFacts | None = None,
        coercions: Sequence[tuple[str, str]] | None = None,
        lossy: bool | None = None,
    ) -> StoredTable:
        """Change what is kept about a stored table (its name, facts, type changes)."""
        table = self.table(identity)
        if table is None:
            raise WorkspaceError(f"the table {identity} is not in the workspace {self._path}")
        if name is not None:
            table = replace(table, name=name)
        if facts is not None:
            if not isinstance(facts, PublicFacts):
                raise ParameterTypeError(f"facts must be PublicFacts, got {type(facts).__name__}")
            table = replace(table, facts=facts)
        if coercions is not None:
            table = replace(table, coercions=tuple((str(c), str(k)) for c, k in coercions))
        if lossy is not None:
            table = replace(table, lossy=bool(lossy))
        return self._save(table)

    def table(self, identity: str) -> StoredTable | None:
        """The stored table with this identity, or ``None``."""
        data = self._read_json(self._folder(identity) / "table.json")
        if data is None:
            return None
        try:
            return StoredTable.from_dict(data)
        except (DPDashError, ValueError, TypeError) as error:
            raise WorkspaceError(
                f"the workspace record of {identity} is invalid ({error}); use 'Forget this table'"
            ) from error

    def tables(self) -> list[StoredTable]:
        """Every stored table that can be read, most recently saved first."""
        folder = self._path / "tables"
        found = []
        with contextlib.suppress(OSError):
            for child in folder.iterdir():
                if not _KEY.fullmatch(child.name):
                    continue
                with contextlib.suppress(WorkspaceError):
                    table = self.table(f"sha256:{child.name}")
                    if table is not None:
                        found.append(table)
        return sorted(found, key=lambda t: t.saved_at, reverse=True)

    def source_bytes(self, identity: str) -> bytes:
        """The uploaded file's original bytes."""
        target = self._folder(identity) / "source.bin"
        try:
            if target.stat().st_size > MAX_UPLOAD_BYTES:
                raise WorkspaceError(f"{target} is larger than any upload can be; use 'Forget this table'")
            return target.read_bytes()
        except OSError as error:
            raise WorkspaceError(
                f"the stored file of {identity} cannot be read ({error.strerror or error}); upload it again"
            ) from error

    def forget(self, identity: str) -> bool:
        """Delete a table's files from the workspace (the ledger keeps its budget history); ``True`` if
        there was something to delete. The active pointer is cleared if it pointed there."""
        folder = self._folder(identity)
        if self.active_identity() == identity:
            with contextlib.suppress(OSError):
                (self._path / "active.json").unlink()
        if not folder.exists():
            return False
        try:
            shutil.rmtree(folder)
        except OSError as error:
            raise WorkspaceError(f"cannot delete {folder} ({error.strerror or error})") from error
        return True

    # ---- released synthetic tables ---------------------------------------------------------------
    def store_synthetic(self, identity: str, csv: bytes) -> str:
        """Keep a released synthetic table's CSV in its table's folder (``synthetic-<sha256>.csv``), so
        that the people who may see the table's releases can download it; returns its ``sha256:`` name."""
        digest = hashlib.sha256(bytes(csv)).hexdigest()
        self._write(self._folder(identity) / f"synthetic-{digest}.csv", bytes(csv))
        return f"sha256:{digest}"

    def synthetic_csv(self, identity: str, table_sha256: str) -> bytes | None:
        """A released synthetic table's CSV by the SHA-256 its record states (checked on reading), or
        ``None`` when it is not kept here (released elsewhere, or forgotten)."""
        digest = table_sha256.removeprefix("sha256:")
        if not _KEY.fullmatch(digest):
            return None
        try:
            data = (self._folder(identity) / f"synthetic-{digest}.csv").read_bytes()
        except OSError:
            return None
        return data if hashlib.sha256(data).hexdigest() == digest else None

    def store_synthetic_card(self, identity: str, card: Mapping[str, Any]) -> None:
        """Keep the data card of a released synthetic table (``ui.synthetic_card.card_dict``) beside its CSV,
        by the SHA-256 it states (``table_sha256``): the owner's last choice of what the card holds."""
        digest = str(card.get("table_sha256", "")).removeprefix("sha256:")
        if not _KEY.fullmatch(digest):
            raise WorkspaceError(f"a data card states the SHA-256 of its table, got {digest!r}")
        text = json.dumps(dict(card), ensure_ascii=False, allow_nan=False)
        self._write(self._folder(identity) / f"synthetic-{digest}.card.json", text.encode("utf-8"))

    def synthetic_card(self, identity: str, table_sha256: str) -> dict[str, Any] | None:
        """The kept data card of a released synthetic table, or ``None`` (none kept, unreadable, or not this
        table's)."""
        digest = table_sha256.removeprefix("sha256:")
        if not _KEY.fullmatch(digest):
            return None
        try:
            card = self._read_json(self._folder(identity) / f"synthetic-{digest}.card.json")
        except WorkspaceError:  # a damaged card: as if none were kept (the table keeps its charts)
            return None
        if not isinstance(card, dict) or str(card.get("table_sha256", "")).removeprefix("sha256:") != digest:
            return None
        return card

    # ---- the active table -----------------------------------------------------------------------
    def set_active(self, identity: str) -> None:
        """Make a stored table the one the app opens first."""
        _key(identity)
        text = json.dumps({"identity": identity, "since": _now()})
        self._write(self._path / "active.json", text.encode("utf-8"))

    def active_identity(self) -> str | None:
        data = self._read_json(self._path / "active.json")
        identity = data.get("identity") if isinstance(data, dict) else None
        return identity if isinstance(identity, str) else None

    def active(self) -> StoredTable | None:
        """The stored table the app opens first, or ``None``."""
        identity = self.active_identity()
        return None if identity is None else self.table(identity)
