"""Column names: trimmed, NFC, invisible and control characters removed, blanks named, duplicates renamed.

Every change is said in a warning; names are shown with ``repr``, so a removed character is visible
there as an escape (``'\\u202e'``) and never acts on the page."""

from __future__ import annotations

import unicodedata

import pandas as pd

from dpdash.loading._common import _EXAMPLES, DataLoadError

# Removed from names: format characters (bidirectional controls such as U+202E, zero-width characters,
# the byte-order mark, soft hyphens); replaced by a space: control characters and line/paragraph breaks.
_REMOVED = frozenset({"Cf"})
_SPACED = frozenset({"Cc", "Zl", "Zp"})


def _visible(text: str) -> str:
    """``text`` NFC-normalised, without the characters that are invisible or reorder what is shown."""
    text = unicodedata.normalize("NFC", text)
    if text.isprintable():  # the common case, answered in C: nothing to remove
        return text
    kept = []
    for character in text:
        category = unicodedata.category(character)
        if category in _SPACED:
            kept.append(" ")
        elif category not in _REMOVED:
            kept.append(character)
    return "".join(kept)


def _hidden_removed(pairs: list[tuple[str, str]], what: str) -> str:
    shown = ", ".join(f"{before!r} → {after!r}" for before, after in pairs[:_EXAMPLES])
    more = f" and {len(pairs) - _EXAMPLES} more" if len(pairs) > _EXAMPLES else ""
    return (
        f"invisible or control characters (such as right-to-left overrides or zero-width spaces, which can "
        f"make text display as something else) were removed from {what}: {shown}{more}"
    )


def _clean_filename(name: str, warnings: list[str]) -> str:
    """The file's name without invisible or control characters (said in a warning if any were)."""
    clean = _visible(name).strip() or "unnamed file"
    if clean != name.strip():
        warnings.append(_hidden_removed([(name, clean)], "the file's name"))
    return clean


def _tidy(frame: pd.DataFrame, name: str, warnings: list[str]) -> pd.DataFrame:
    """Unique, trimmed, NFC names without invisible characters; unnamed empty columns dropped; each said."""
    raw = ["" if value is None else str(value) for value in frame.columns]
    clean = [_visible(n).strip() for n in raw]
    blank_and_empty = [i for i, n in enumerate(clean) if not n and frame.iloc[:, i].isna().all()]
    if blank_and_empty:
        frame = frame.iloc[:, [i for i in range(frame.shape[1]) if i not in set(blank_and_empty)]]
        raw = [n for i, n in enumerate(raw) if i not in set(blank_and_empty)]
        clean = [n for i, n in enumerate(clean) if i not in set(blank_and_empty)]
        warnings.append(
            f"{len(blank_and_empty)} column{'s' if len(blank_and_empty) != 1 else ''} with neither a name "
            "nor any value (e.g. from a separator at the end of each line) "
            f"{'were' if len(blank_and_empty) != 1 else 'was'} ignored"
        )
    if frame.shape[1] == 0:
        raise DataLoadError(f"{name!r} has no columns with values: upload a table with data")
    hidden = [
        (r, c) for r, c in zip(raw, clean, strict=True) if _visible(r) != unicodedata.normalize("NFC", r)
    ]
    if hidden:
        warnings.append(_hidden_removed(hidden, "column names"))
    seen_hidden = set(hidden)
    trimmed = [(r, c) for r, c in zip(raw, clean, strict=True) if c and r != c and (r, c) not in seen_hidden]
    if trimmed:
        warnings.append(
            "column names were trimmed: "
            + ", ".join(f"{r!r} → {c!r}" for r, c in trimmed[:_EXAMPLES])
            + (f" and {len(trimmed) - _EXAMPLES} more" if len(trimmed) > _EXAMPLES else "")
        )
    blank = [i for i, n in enumerate(clean) if not n]
    for i in blank:
        clean[i] = f"column_{i + 1}"
    if blank:
        warnings.append(
            "columns without a name were named after their position: "
            + ", ".join(repr(clean[i]) for i in blank[:_EXAMPLES])
        )
    final, renamed, taken = [], [], set(clean)
    seen: dict[str, int] = {}
    for position, n in enumerate(clean, start=1):
        if n not in seen:
            seen[n] = 1
            final.append(n)
            continue
        copy = seen[n]
        while True:
            copy += 1
            candidate = f"{n}_{copy}"
            if candidate not in taken:
                break
        seen[n] = copy
        taken.add(candidate)
        final.append(candidate)
        renamed.append(f"column {position} {n!r} → {candidate!r}")
    if renamed:
        warnings.append(
            "duplicate column names were renamed (the first keeps its name): "
            + "; ".join(renamed[:_EXAMPLES])
            + (f" and {len(renamed) - _EXAMPLES} more" if len(renamed) > _EXAMPLES else "")
        )
    return frame.set_axis(final, axis=1)
