"""Delimited text: CSV and TSV bytes → a DataFrame, with the encoding and separator used."""

from __future__ import annotations

import contextlib
import io
import re

import pandas as pd
import pyarrow as pa

from dpdash.loading import _limits
from dpdash.loading._common import (
    _EXAMPLES,
    _SNIFF_BYTES,
    DataLoadError,
    _clip,
    _count,
    _looks_like_text,
    _what_it_is,
    _without_empty_rows,
)

_SEPARATORS = {"csv": [",", ";", "\t", "|"], "tsv": ["\t", ",", ";", "|"]}
_SEPARATOR_NAMES = {",": "commas", ";": "semicolons", "\t": "tabs", "|": "vertical bars"}
# pyarrow parses in blocks of this many bytes (its default); a row longer than a block is read again
# with the whole file as one block, so a long field loads however long it is.
_BLOCK_BYTES = 1 << 20
# Rows with the wrong number of fields are counted up to this many, then reading stops: the message
# says "at least", and a file of millions of bad rows costs no more than this.
_MAX_BAD_ROWS = 1000


def _read_text(
    data: bytes, name: str, file_format: str, warnings: list[str]
) -> tuple[pd.DataFrame, str, str]:
    import pyarrow.csv as pv

    found = _what_it_is(data)
    if found is not None:
        description, real_format = found
        hint = {
            "xlsx": "if it is an Excel workbook, rename it to .xlsx",
            "parquet": "rename it to .parquet",
        }.get(real_format or "", "export the table as CSV (UTF-8) and upload that")
        raise DataLoadError(f"{name!r} is not a text table: it looks like {description}; {hint}")
    text, utf8, encoding = _decode(data, name, warnings)
    if not text or text.isspace():
        raise DataLoadError(f"{name!r} is empty (only blank lines): choose a file that contains a table")
    start = text[:4096].lstrip()[:200].lower()
    if start.startswith(("<!doctype html", "<html")):
        raise DataLoadError(
            f"{name!r} is a web page (HTML), not a table: the download probably failed; "
            "download the table itself and upload that"
        )
    separator = _sniff_separator(text, name, file_format, warnings)
    if not utf8.endswith(b"\n"):
        utf8 += b"\n"  # pyarrow cannot infer the columns of a last line without a line end

    _refuse_wide_header(utf8, separator, name)

    bad_rows: list[object] = []  # the first few, to show
    n_bad = [0]
    show_only = [False]  # the second reading only looks for the lines to name

    def keep_bad_row(row: object) -> str:
        n_bad[0] += 1
        if len(bad_rows) < 3:
            bad_rows.append(row)
        stop = n_bad[0] >= 3 if show_only[0] else n_bad[0] > _MAX_BAD_ROWS
        return "error" if stop else "skip"

    def read(use_threads: bool, block_size: int) -> pa.Table:
        return pv.read_csv(
            io.BytesIO(utf8),
            read_options=pv.ReadOptions(use_threads=use_threads, block_size=block_size),
            parse_options=pv.ParseOptions(
                delimiter=separator, newlines_in_values=True, invalid_row_handler=keep_bad_row
            ),
            convert_options=pv.ConvertOptions(strings_can_be_null=True),
        )

    block_size = _BLOCK_BYTES
    try:
        try:
            table = read(use_threads=True, block_size=block_size)
        except pa.ArrowInvalid as error:
            if "straddl" not in str(error) or n_bad[0] > _MAX_BAD_ROWS:
                raise
            # A row longer than a block (a long text value): read the whole file as one block.
            block_size = len(utf8) + 1
            bad_rows.clear()
            n_bad[0] = 0
            table = read(use_threads=True, block_size=block_size)
    except pa.ArrowException as error:
        if n_bad[0] <= _MAX_BAD_ROWS:
            raise DataLoadError(
                f"{name!r} could not be read as {_SEPARATOR_NAMES[separator][:-1]}-separated text "
                f'({error}); check for an unclosed quote (") and save the table again as CSV'
            ) from error
        table = None
    n_found = n_bad[0]
    if n_found:
        # Threads do not know line numbers: read again, one thread, to name the first lines.
        bad_rows.clear()
        n_bad[0] = 0
        show_only[0] = True
        with contextlib.suppress(pa.ArrowException):  # stopped on purpose after the third bad row
            read(use_threads=False, block_size=block_size)
        shown = "; ".join(
            f"line {row.number} has {row.actual_columns} field{'s' if row.actual_columns != 1 else ''}"
            f" ({_clip(row.text)})"
            for row in bad_rows[:3]
        )
        header = bad_rows[0].expected_columns if bad_rows else "its"
        counted = f"more than {_MAX_BAD_ROWS:,} rows" if n_found > _MAX_BAD_ROWS else _count(n_found, "row")
        names = "" if table is None else f" ({_clip(', '.join(map(str, table.column_names)))})"
        raise DataLoadError(
            f"{name!r} has {counted} whose number of values differs from the header's {header}{names}: "
            f"{shown}. Fix those rows (a missing or extra {_SEPARATOR_NAMES[separator][:-1]}, or one "
            "inside a value that needs quotes) and upload again"
        )
    names = table.column_names
    if table.num_rows == 0:
        raise DataLoadError(
            f"{name!r} has a header ({_clip(', '.join(map(str, names)))}) but no data rows: "
            "add the rows below the header and upload again"
        )
    _refuse_unclosed_quote(table, utf8, name)
    n_cells = table.num_rows * table.num_columns
    _limits.refuse_above(name, "cells (rows × columns)", n_cells, _limits.MAX_CELLS)
    table = _without_empty_rows(table, name, warnings)
    frame = table.to_pandas(date_as_object=False)
    frame.columns = names  # to_pandas may mangle duplicates; _tidy renames them visibly
    return frame, encoding, separator


def _refuse_wide_header(utf8: bytes, separator: str, name: str) -> None:
    """Count the header's fields on its bytes, before pyarrow builds a column for each."""
    body = utf8.lstrip(b"\r\n")
    end = body.find(b"\n")
    header = body if end < 0 else body[:end]
    unquoted = re.sub(rb'"[^"]*"', b"", header)
    n_columns = unquoted.count(separator.encode()) + 1
    _limits.refuse_above(name, "columns", n_columns, _limits.MAX_COLUMNS)


def _refuse_unclosed_quote(table: pa.Table, utf8: bytes, name: str) -> None:
    """Refuse a file whose last value runs from an opening quote to the end of the file.

    pyarrow reads such a quote as a value holding every line after it; a value that spans lines and is
    the very end of the file (no closing quote after it) can only come from a quote never closed."""
    tail = utf8.rstrip(b"\r\n")
    for column in table.columns:
        if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
            continue
        value = column[-1].as_py()
        if not value or "\n" not in value:
            continue
        encoded = value.rstrip("\r\n").encode()
        if tail.endswith(encoded):
            line = utf8.count(b"\n", 0, len(tail) - len(encoded)) + 1
            raise DataLoadError(
                f'{name!r} has a quote (") on line {line} that is never closed, so every line after '
                "it would become part of one value: close the quote (or remove it) and upload again"
            )


def _decode(data: bytes, name: str, warnings: list[str]) -> tuple[str, bytes, str]:
    """The text, its UTF-8 bytes (what pyarrow reads) and the encoding used."""
    for bom, codec in ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16")):
        if data.startswith(bom):
            try:
                text = data.decode(codec)
            except UnicodeDecodeError as error:
                raise DataLoadError(
                    f"{name!r} starts with a {codec.upper()} byte-order mark but is not valid "
                    f"{codec.upper()} ({error.reason} at byte {error.start}): save it again as CSV (UTF-8)"
                ) from error
            if codec == "utf-8-sig":
                return text, data[len(bom) :], codec
            return text, text.encode("utf-8"), codec
    if not _looks_like_text(data):
        raise DataLoadError(
            f"{name!r} is not text (it contains binary bytes, as a spreadsheet, database or image file "
            "does): export the table as CSV (UTF-8) and upload that"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        first_line = data.count(b"\n", 0, error.start) + 1
        replaced = data.decode("utf-8", errors="replace")
        n_bad = replaced.count("\ufffd")
        n_good = sum(1 for ch in replaced if ord(ch) > 127) - n_bad
        if n_good > n_bad:
            warnings.append(
                f"{name!r} is UTF-8 except for {n_bad} invalid byte{'s' if n_bad != 1 else ''} "
                f"(first on line {first_line}); {'they were' if n_bad != 1 else 'it was'} replaced by "
                "'\ufffd': fix them in the file if those values matter"
            )
            return replaced, replaced.encode("utf-8"), "utf-8 (invalid bytes replaced)"
        try:
            text, encoding = data.decode("cp1252"), "cp1252"
            label = "Windows-1252 (cp1252, what Excel on Windows saves)"
        except UnicodeDecodeError:
            text, encoding, label = data.decode("latin-1"), "latin-1", "Latin-1 (ISO-8859-1)"
        words = list(dict.fromkeys(re.findall(r"\w*[^\x00-\x7f]\w*", text[:1_000_000])))[:_EXAMPLES]
        warnings.append(
            f"{name!r} is not UTF-8 (first non-UTF-8 byte on line {first_line}); it was read as {label}, "
            f"which gives e.g. {', '.join(repr(w) for w in words)}. If these look wrong, save the file as "
            "CSV UTF-8 and upload it again"
        )
        return text, text.encode("utf-8"), encoding
    # Valid UTF-8 that looks converted twice ("Ã©" for "é") is kept, but said.
    twice = re.findall(r"\w*[ÃÂ][\x80-\xbf]\w*", text[:1_000_000]) if "Ã" in text or "Â" in text else []
    if twice:
        shown = ", ".join(repr(w) for w in list(dict.fromkeys(twice))[:_EXAMPLES])
        warnings.append(
            f"{name!r} has text that looks encoded twice (e.g. {shown}, where 'Ã©' stands for 'é'); "
            "the file was probably converted to UTF-8 twice: fix it at the source if these values matter"
        )
    return text, data, "utf-8"


def _sniff_separator(text: str, name: str, file_format: str, warnings: list[str]) -> str:
    header = text[:_SNIFF_BYTES].lstrip("\r\n").split("\n", 1)[0]
    unquoted = re.sub(r'"[^"]*"', "", header)
    candidates = _SEPARATORS[file_format]
    counts = {sep: unquoted.count(sep) for sep in candidates}
    best = max(candidates, key=lambda sep: (counts[sep], sep == candidates[0]))
    if counts[best] == 0:
        return candidates[0]
    if best != candidates[0] and not name.lower().endswith(".txt"):
        commas = " (with decimal commas such as 3,5 read as numbers)" if best == ";" else ""
        warnings.append(
            f"{name!r} is separated by {_SEPARATOR_NAMES[best]}, not {_SEPARATOR_NAMES[candidates[0]]}; "
            f"it was read that way{commas}"
        )
    return best
