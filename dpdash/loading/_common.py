"""What every reader shares: the error, the formats, recognising a file by its first bytes, and the
small helpers that write sizes and clip values for messages."""

from __future__ import annotations

import pyarrow as pa

from dpdash.errors import DPDashError

#: File extension → format read. ``.txt`` is read as delimited text with a sniffed separator.
FORMATS = {
    ".csv": "csv",
    ".txt": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".xlsx": "xlsx",
}
#: The extensions to offer in a file picker (without the dot), e.g. ``st.file_uploader(type=...)``.
UPLOAD_EXTENSIONS = tuple(extension[1:] for extension in FORMATS)


_SNIFF_BYTES = 65_536
_MAGIC = [
    (b"PK\x03\x04", "a ZIP archive (an Excel .xlsx workbook, or another zipped file)", "xlsx"),
    (b"PAR1", "a Parquet file", "parquet"),
    (
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1",
        "an Excel 97-2003 .xls workbook (or another old Office file)",
        None,
    ),
    (b"\x1f\x8b", "a gzip-compressed file", None),
    (b"%PDF", "a PDF document", None),
    (b"\x89PNG", "a PNG image", None),
    (b"\xff\xd8\xff", "a JPEG image", None),
    (b"GIF8", "a GIF image", None),
    (b"SQLite format 3\x00", "an SQLite database", None),
]
_EXAMPLES = 5


class DataLoadError(DPDashError, ValueError):
    """A file (or a column) cannot be read as a table; the message says what is wrong and what to do."""


def _size(n_bytes: int) -> str:
    """``n_bytes`` for a message, in decimal units (1 MB = 1 000 000 bytes, as the upload limit)."""
    if n_bytes < 1_000_000:
        return f"{n_bytes / 1000:.1f} KB" if n_bytes >= 1000 else f"{n_bytes} bytes"
    return f"{n_bytes / 1_000_000:.1f} MB"


def _count(n: int, word: str) -> str:
    """``n`` with thousands separators and ``word`` (given in the singular, plural with an s)."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _clip(text: str, limit: int = 60) -> str:
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _what_it_is(data: bytes) -> tuple[str, str | None] | None:
    for magic, description, file_format in _MAGIC:
        if data.startswith(magic):
            return description, file_format
    return None


def _looks_like_text(data: bytes) -> bool:
    head = data[:_SNIFF_BYTES]
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return True
    if b"\x00" in head:
        return False
    controls = sum(head.count(bytes([b])) for b in (*range(1, 9), *range(14, 32)))
    return controls <= len(head) / 1000


def _actually(data: bytes) -> str:
    found = _what_it_is(data)
    if found is not None:
        description, real_format = found
        rename = {"xlsx": " rename it to .xlsx if it is a workbook", "parquet": " rename it to .parquet"}
        return f"it looks like {description};" + rename.get(real_format or "", " upload the table itself")
    if _looks_like_text(data):
        return "it looks like text; if it is a CSV or TSV table, rename it to .csv or .tsv"
    return "its content is not that format; export the table as CSV (UTF-8) and upload that"


def _without_empty_rows(table: pa.Table, name: str, warnings: list[str]) -> pa.Table:
    """``table`` without the rows whose every value is missing (",,," lines), counted in a warning.

    Done on the Arrow table, before pandas, so an integer column keeps its integer type."""
    import pyarrow.compute as pc

    if any(column.null_count == 0 for column in table.columns):
        return table
    empty = pc.is_null(table.column(0))
    for column in table.columns[1:]:
        empty = pc.and_(empty, pc.is_null(column))
    n_empty = int(pc.sum(empty).as_py() or 0)
    if n_empty == table.num_rows:
        raise DataLoadError(f"{name!r} has a header but every row is empty: upload a table with data")
    if n_empty:
        warnings.append(_empty_rows_dropped(n_empty))
        table = table.filter(pc.invert(empty))
    return table


def _empty_rows_dropped(n_empty: int) -> str:
    rows, were = ("rows", "were") if n_empty != 1 else ("row", "was")
    return f"{n_empty} {rows} with every value empty {were} dropped"
