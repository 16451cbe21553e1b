"""Exports are signed, and an import only ever makes a dataset's record more conservative (issue 12, item 4).

The forger here is careful: after each edit it recomputes the entries' digest and the stated totals, so only
the signature and the import rules stand between the edit and the ledger. The edits are the ones the red-team
pass got accepted: a lowered ε, a removed entry, partition labels that make entries parallel, a raised budget
and an export re-keyed to another table's fingerprint.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dpdash.accounting import Budget, LaplaceEvent
from dpdash.accounting.event_factory import event_from_dict
from dpdash.accounting.events import canonical_json
from dpdash.ledger import Ledger, LedgerError
from dpdash.ledger.exports import totals_record as _totals_record
from dpdash.ledger.records import Dataset
from dpdash.ledger.signing import new_private_key, public_key, sign

A, B = "sha256:table-a", "sha256:table-b"
AB = (A, B)
BAD_SIGNATURE = {"algorithm": "ed25519", "public_key": "ed25519:" + "0" * 64, "value": "z"}
Document = dict[str, Any]


@pytest.fixture
def source(tmp_path: Path) -> Ledger:
    """The exporting ledger: table A with four releases of ε = 0.2 (spent 0.8 of 1.0 under basic)."""
    ledger = Ledger(tmp_path / "source.sqlite")
    for fp, name in ((A, "a"), (B, "b")):
        ledger.add_dataset(name=name, fingerprint=fp, budget=Budget(1.0), accountant="basic")
    for i in range(4):
        ledger.spend(A, LaplaceEvent(epsilon=0.2, sensitivity=1.0, query=f"count {i}"))
    ledger.spend(B, LaplaceEvent(epsilon=0.3, sensitivity=1.0, query="b"))
    yield ledger
    ledger.close()


def reseal(document: Document, key: str | None) -> str:
    """What a careful forger does after an edit: recompute the digest and the totals, then sign with
    ``key`` (its own key) or drop the signature (``None``)."""
    document.pop("signature", None)
    document["entries_sha256"] = hashlib.sha256(canonical_json(document["entries"]).encode()).hexdigest()
    raw = document["dataset"]
    ds = Dataset(
        raw["fingerprint"], raw["name"], Budget(**raw["budget"]), raw["accountant"], raw["created_at"]
    )
    events = [event_from_dict(e["event"]) for e in document["entries"]]
    document["totals"] = _totals_record(ds, events)
    if key is not None:
        document = sign(document, key)
    return json.dumps(document)


def lower_epsilon(d: Document) -> None:
    event = d["entries"][0]["event"]
    event["epsilon"], event["scale"] = 0.02, 50.0


def remove_entry(d: Document) -> None:
    d["entries"].pop()


def make_parallel(d: Document) -> None:
    for i, entry in enumerate(d["entries"]):
        entry["event"]["partition"] = ["region", f"r{i}"]


def raise_budget(d: Document) -> None:
    d["dataset"]["budget"]["epsilon"] = 100.0


def rekey_to_b(d: Document) -> None:
    d["dataset"]["fingerprint"] = B


EDITS: dict[str, Callable[[Document], None]] = {
    "lowered ε": lower_epsilon,
    "removed entry": remove_entry,
    "made parallel": make_parallel,
    "raised budget": raise_budget,
    "re-keyed": rekey_to_b,
}


def edited(source: Ledger, edit: Callable[[Document], None], key: str | None) -> str:
    document = json.loads(source.export_json(A))
    edit(document)
    return reseal(document, key)


def spent_by_accountant(ledger: Ledger, fingerprint: str) -> dict[str, float | None]:
    return {name: None if t is None else t.epsilon for name, t in ledger.totals(fingerprint).items()}


# ---- signatures --------------------------------------------------------------------------------------


def test_exports_carry_a_valid_signature_of_their_ledger(source: Ledger, tmp_path: Path) -> None:
    document = json.loads(source.export_json(A))
    assert document["signature"]["algorithm"] == "ed25519"
    assert document["signature"]["public_key"] == source.public_key
    with Ledger(tmp_path / "fresh.sqlite") as fresh:
        fresh.trust_key(source.public_key, "source")
        assert fresh.trusted_keys() == {source.public_key: "source"}
        report = fresh.import_json(json.dumps(document))
        assert (report.added, report.signed_by, report.trusted) == (4, source.public_key, True)


@pytest.mark.parametrize("edit", EDITS.values(), ids=EDITS.keys())
def test_an_edit_under_the_original_signature_is_refused(  # type: ignore[no-untyped-def]
    source: Ledger, tmp_path: Path, edit
) -> None:
    """Digest and totals recomputed, the original signature kept: refused, whoever imports it."""
    document = json.loads(source.export_json(A))
    signature = document["signature"]
    edit(document)
    text = reseal(document, None)
    forged = json.loads(text)
    forged["signature"] = signature
    with Ledger(tmp_path / "fresh.sqlite") as fresh:
        fresh.trust_key(source.public_key)
        with pytest.raises(LedgerError, match="changed after it was signed"):
            fresh.import_json(json.dumps(forged))
        assert fresh.datasets() == []
    with pytest.raises(LedgerError, match="changed after it was signed"):
        source.import_json(json.dumps(forged))


@pytest.mark.parametrize("signer", ["unsigned", "forger's own key"])
@pytest.mark.parametrize("edit", EDITS.values(), ids=EDITS.keys())
def test_an_unverified_export_cannot_create_a_dataset(  # type: ignore[no-untyped-def]
    source: Ledger, tmp_path: Path, edit, signer: str
) -> None:
    """Into a ledger that does not have the table, an edited export, unsigned or re-signed with the forger's
    key, is refused: it would bring a budget and a history nobody can vouch for."""
    key = None if signer == "unsigned" else new_private_key()
    text = edited(source, edit, key)
    with Ledger(tmp_path / "fresh.sqlite") as fresh:
        fresh.trust_key(source.public_key)  # trusting the real source does not help a forgery
        with pytest.raises(LedgerError, match="unverified export could understate"):
            fresh.import_json(text)
        assert fresh.datasets() == []


@pytest.mark.parametrize("signer", ["unsigned", "forger's own key"])
@pytest.mark.parametrize("edit", EDITS.values(), ids=EDITS.keys())
def test_an_unverified_export_never_lowers_what_a_ledger_records(  # type: ignore[no-untyped-def]
    source: Ledger, edit, signer: str
) -> None:
    """Into the ledger that already has the table (A, and B for the re-keyed export), whatever the forger
    did: the budget stays, no entry is removed or changed, and no accountant's total goes down."""
    key = None if signer == "unsigned" else new_private_key()
    text = edited(source, edit, key)
    before = {fp: (source.dataset(fp), source.entries(fp), spent_by_accountant(source, fp)) for fp in AB}
    with contextlib.suppress(LedgerError):  # refused is fine, as long as nothing changed (checked below)
        source.import_json(text)
    for fp in AB:
        dataset, entries, totals = before[fp]
        assert source.dataset(fp) == dataset
        after = source.entries(fp)
        assert after[: len(entries)] == entries  # nothing removed or changed, at most added
        now = spent_by_accountant(source, fp)
        for name, total in totals.items():
            assert total is None or now[name] is None or now[name] >= total - 1e-12, (name, total, now[name])


def test_a_rekeyed_unsigned_export_only_adds_spends(source: Ledger, tmp_path: Path) -> None:
    """Table A's history re-keyed to table B: a ledger that has B (spent 0.1) gains A's four releases, so its
    record of B only grows; in the source ledger, where those entries belong to A, it is refused."""
    text = edited(source, rekey_to_b, None)
    with Ledger(tmp_path / "other.sqlite") as other:
        other.add_dataset(name="b", fingerprint=B, budget=Budget(1.0), accountant="basic")
        other.spend(B, LaplaceEvent(epsilon=0.1, sensitivity=1.0, query="b"))
        report = other.import_json(text, dataset=B)
        assert (report.added, report.signed_by, report.trusted) == (4, None, False)
        assert "unsigned" in report.origin and "only add releases" in report.origin
        assert other.spent(B).epsilon == pytest.approx(0.9)
    with pytest.raises(LedgerError, match="differs"):
        source.import_json(text, dataset=B)
    assert source.spent(B).epsilon == pytest.approx(0.3)


def test_a_trusted_key_lets_a_new_dataset_in(source: Ledger, tmp_path: Path) -> None:
    other_key = new_private_key()
    text = edited(source, raise_budget, other_key)  # signed by another ledger the owner trusts
    with Ledger(tmp_path / "fresh.sqlite") as fresh:
        with pytest.raises(LedgerError, match="does not trust"):
            fresh.import_json(text)
        fresh.trust_key(public_key(other_key), "the other office")
        report = fresh.import_json(text)
        assert report.trusted and report.dataset.budget == Budget(100.0)
        assert report.origin == f"The export was signed by {public_key(other_key)}, a key this ledger trusts."


@pytest.mark.parametrize("key", ["", "ed25519:xyz", "rsa:" + "0" * 64, 42])
def test_bad_keys_are_refused(source: Ledger, key: object) -> None:
    with pytest.raises((ValueError, TypeError), match="public key"):
        source.trust_key(key)  # type: ignore[arg-type]


# ---- malformed exports are messages --------------------------------------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d["totals"].update(basic="x"),
        lambda d: d["totals"].update(accountant=[1]),
        lambda d: d.update(entries=[["not", "a", "record"]]),
        lambda d: d.update(sessions=["x"]),
        lambda d: d.update(dataset="x"),
        lambda d: d.update(signature="x"),
        lambda d: d.update(signature=BAD_SIGNATURE),
    ],
)
def test_malformed_exports_are_messages(source: Ledger, change) -> None:  # type: ignore[no-untyped-def]
    document = json.loads(source.export_json(A))
    bad = copy.deepcopy(document)
    change(bad)
    with pytest.raises(LedgerError):
        source.import_json(json.dumps(bad))


def test_an_export_nested_100000_deep_is_a_message(source: Ledger) -> None:
    with pytest.raises(LedgerError, match="nested too deeply"):
        source.import_json("[" * 100_000 + "]" * 100_000)


def test_an_import_does_not_recompute_the_stated_accountant_total(
    source: Ledger, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Verifying an export checks its count and basic totals only: the stated total under the dataset's
    accountant (which for PLD means composing every entry from scratch, 30 s for 3 000 varied entries) is
    not recomputed; the signature proves the document, and the ledger computes its own totals."""
    from dpdash.ledger import exports, transfer

    text = source.export_json(A)

    def no_total(*args: object, **kwargs: object) -> None:
        raise AssertionError("the import recomputed the export's stated totals")

    monkeypatch.setattr(transfer, "_totals_record", no_total)
    monkeypatch.setattr(exports, "totals_record", no_total)
    with Ledger(tmp_path / "fresh.sqlite") as fresh:
        fresh.trust_key(source.public_key)
        assert fresh.import_json(text).added == 4
    document = json.loads(text)
    document["totals"]["accountant"]["name"] = "pld"  # a careless edit of the stated accountant is refused
    with pytest.raises(LedgerError, match="totals do not match"):
        source.import_json(reseal_keeping_totals(document))


def reseal_keeping_totals(document: Document) -> str:
    """The digest recomputed, the (edited) totals kept, unsigned."""
    document.pop("signature", None)
    document["entries_sha256"] = hashlib.sha256(canonical_json(document["entries"]).encode()).hexdigest()
    return json.dumps(document)
