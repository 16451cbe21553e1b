"""Reading an uploaded table: CSV, TSV, Parquet or Excel bytes → a DataFrame, its column types and warnings.

Everything a person can get wrong with a file ends in a ``DataLoadError`` (a ``DPDashError`` and a
``ValueError``) whose message names the file, says what is wrong and what to do; anything dpdash fixed
on its own (an encoding fallback, renamed duplicate columns, a sniffed separator) is listed in
``LoadedTable.warnings``, never done silently.

Decisions, so the app and the README can state them:

- **Size.** Files above ``MAX_UPLOAD_MB`` are refused before anything is parsed.
- **Encoding.** Text is read as UTF-8 (a BOM is honoured, UTF-16 with a BOM too). If it is not valid
  UTF-8, a file that is mostly UTF-8 keeps UTF-8 and the bad bytes become "�"; otherwise it is read as
  Windows-1252 (cp1252), or Latin-1 where cp1252 has no character, with a warning that shows words as
  they were read, so wrong letters are visible instead of silent.
- **Separator.** CSV/TSV files are sniffed on the header line among , ; tab and |; a separator other
  than the extension's is used with a warning (a semicolon file also reads decimal commas).
- **One column.** Allowed, with a warning: a single column is a legitimate table (a list of ages), and
  every query works on it; the warning catches the usual cause, a separator dpdash did not recognise.
- **Column names.** Spaces around names are trimmed and names are NFC-normalised; blank names become
  ``column_<position>``; duplicates are kept and renamed ``name_2``, ``name_3`` … with a warning that
  says which position got which name (refusing would make people edit a file for a harmless problem,
  and nothing is lost). Unicode names are kept as they are.
- **Rows.** Rows with a different number of fields than the header are refused (they usually mean a
  separator inside an unquoted value, and guessing would shift values into the wrong columns). Rows
  with every value empty are dropped, with a warning that counts them.
- **Numbers with text in them.** A column whose values are mostly numbers but not all is kept as text,
  with a warning naming the column, the count of non-numeric values and examples; ``coerce_column``
  turns it into numbers when the person agrees that those values become missing.

>>> table = load_table(b"age,sex\\n34,f\\n51,m\\n29,f\\n62,m\\n", "people.csv")
>>> table.file_format, table.data.shape, table.column_types
('csv', (4, 2), {'age': 'integer', 'sex': 'categorical'})
"""

from __future__ import annotations

import hashlib
import io
import re
import unicodedata
import zipfile
from dataclasses import dataclass
from pathlib import PurePath
from typing import Literal
from warnings import catch_warnings, simplefilter

import numpy as np
import pandas as pd
import pyarrow as pa

from dpdash import _validation as check
from dpdash.errors import DPDashError, ParameterError, ParameterTypeError

__all__ = [
    "COLUMN_KINDS",
    "FORMATS",
    "MAX_CATEGORIES",
    "MAX_UPLOAD_BYTES",
    "MAX_UPLOAD_MB",
    "UPLOAD_EXTENSIONS",
    "ColumnConversionError",
    "ColumnKind",
    "DataLoadError",
    "LoadedTable",
    "MixedColumn",
    "coerce_column",
    "column_types",
    "load_table",
]

#: The largest file ``load_table`` accepts by default, in megabytes (MiB: 1 MB = 1 048 576 bytes, as
#: Streamlit's ``server.maxUploadSize`` counts them).
MAX_UPLOAD_MB = 100
MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 1024 * 1024

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

ColumnKind = Literal["numeric", "integer", "categorical", "boolean", "text", "datetime"]
#: The column types the app shows and lets people change.
COLUMN_KINDS: tuple[ColumnKind, ...] = ("numeric", "integer", "categorical", "boolean", "text", "datetime")
#: A text column with at most this many distinct values (each seen twice on average) is categorical.
MAX_CATEGORIES = 100

# An .xlsx is a ZIP of XML; refuse one that would unpack to more than this multiple of the size limit
# (a "zip bomb" would otherwise take the server's memory).
_XLSX_MAX_EXPANSION = 20
_SNIFF_BYTES = 65_536
_SEPARATORS = {"csv": [",", ";", "\t", "|"], "tsv": ["\t", ",", ";", "|"]}
_SEPARATOR_NAMES = {",": "commas", ";": "semicolons", "\t": "tabs", "|": "vertical bars"}
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
_NUMBER_SAMPLE = 2_000
_EXAMPLES = 5


class DataLoadError(DPDashError, ValueError):
    """A file (or a column) cannot be read as a table; the message says what is wrong and what to do."""


class ColumnConversionError(DataLoadError):
    """Changing a column's type would lose values; nothing was changed.

    Attributes:
        column: the column's name.
        kind: the type asked for.
        invalid_count: how many non-missing values cannot be converted (they would become missing).
        examples: up to five of them, as text.
    """

    def __init__(
        self, message: str, *, column: str, kind: str, invalid_count: int, examples: tuple[str, ...]
    ):
        super().__init__(message)
        self.column = column
        self.kind = kind
        self.invalid_count = invalid_count
        self.examples = examples


@dataclass(frozen=True, slots=True)
class MixedColumn:
    """A column that is mostly numbers but holds some text, so it was kept as text."""

    column: str
    non_numeric: int
    non_empty: int
    examples: tuple[str, ...]


@dataclass(frozen=True, slots=True, eq=False)  # eq=False: a DataFrame has no single truth value for ==
class LoadedTable:
    """A table read from a file.

    Attributes:
        data: the table; column names are unique strings.
        file_format: ``"csv"``, ``"tsv"``, ``"parquet"`` or ``"xlsx"``: how it was read.
        column_types: column → one of ``COLUMN_KINDS`` (a first guess the person can change).
        warnings: what dpdash changed or noticed, each a sentence for the page.
        mixed_columns: columns kept as text although they are mostly numbers.
        filename: the file's name as given (without folders).
        n_bytes: the file's size.
        sha256: hex SHA-256 of the file's bytes (the same file gives the same value).
        encoding: the text encoding used (``None`` for Parquet and Excel).
        separator: the field separator used (``None`` for Parquet and Excel).
    """

    data: pd.DataFrame
    file_format: str
    column_types: dict[str, ColumnKind]
    warnings: tuple[str, ...] = ()
    mixed_columns: tuple[MixedColumn, ...] = ()
    filename: str = ""
    n_bytes: int = 0
    sha256: str = ""
    encoding: str | None = None
    separator: str | None = None


# --- entry point -------------------------------------------------------------------------------------


def load_table(data: bytes, filename: str, *, max_bytes: int = MAX_UPLOAD_BYTES) -> LoadedTable:
    """Read ``data``, the bytes of the file called ``filename``, as a table.

    The format comes from the extension (see ``FORMATS``); the content must match it.

    Args:
        data: the file's bytes (``bytes``, ``bytearray`` or ``memoryview``).
        filename: its name; only the extension and the name (for messages) are used.
        max_bytes: the size limit, ``MAX_UPLOAD_BYTES`` (100 MB) unless told otherwise.

    Returns:
        A ``LoadedTable``: the DataFrame, the format, column types, warnings.

    Raises:
        DataLoadError: the file is too large, empty, of an unknown type, not what its extension says,
            or not a well-formed table; the message says which and what to do.
        ParameterTypeError: ``data`` is not bytes or ``filename`` not a string.
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise ParameterTypeError(f"data must be the file's bytes, got data of type {type(data).__name__}")
    if not isinstance(filename, str):
        raise ParameterTypeError(f"filename must be a string, got filename={filename!r}")
    max_bytes = check.positive_int(max_bytes, "max_bytes")
    data = bytes(data)
    name = PurePath(filename.replace("\\", "/")).name or filename
    if len(data) > max_bytes:
        raise DataLoadError(
            f"{name!r} is {_size(len(data))}, above the limit of {_size(max_bytes)}: keep only the "
            "columns and rows you need, or save it as Parquet (usually much smaller), and upload again"
        )
    file_format = _format_of(name)
    if not data or data.isspace():
        raise DataLoadError(f"{name!r} is empty ({len(data)} bytes): choose a file that contains a table")

    warnings: list[str] = []
    encoding = separator = None
    if file_format in ("csv", "tsv"):
        frame, encoding, separator = _read_text(data, name, file_format, warnings)
    elif file_format == "parquet":
        frame = _read_parquet(data, name, warnings)
    else:
        frame = _read_xlsx(data, name, max_bytes, warnings)

    frame = _tidy(frame, name, warnings)
    frame, mixed = _settle_types(frame, separator, warnings)
    if frame.shape[1] == 1:
        warnings.append(
            f"{name!r} has a single column ({frame.columns[0]!r}); that is fine for one-column "
            "statistics, but if you expected more, check the separator between values "
            "(dpdash recognises commas, semicolons, tabs and vertical bars)"
        )
    return LoadedTable(
        data=frame,
        file_format=file_format,
        column_types=column_types(frame),
        warnings=tuple(warnings),
        mixed_columns=tuple(mixed),
        filename=name,
        n_bytes=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        encoding=encoding,
        separator=separator,
    )


def _size(n_bytes: int) -> str:
    if n_bytes < 1024 * 1024:
        return f"{n_bytes / 1024:.1f} KB" if n_bytes >= 1024 else f"{n_bytes} bytes"
    return f"{n_bytes / (1024 * 1024):.1f} MB"


def _format_of(name: str) -> str:
    suffixes = [s.lower() for s in PurePath(name).suffixes]
    suffix = suffixes[-1] if suffixes else ""
    if suffix in FORMATS:
        return FORMATS[suffix]
    known = ", ".join(FORMATS)
    if suffix in (".gz", ".zip", ".bz2", ".xz", ".7z"):
        hint = "it is compressed: unpack it first and upload the table inside"
    elif suffix in (".xls", ".xlsm", ".xlsb", ".ods", ".numbers"):
        hint = "open it in your spreadsheet program and save it as .xlsx or .csv"
    elif not suffix:
        hint = "the name has no extension: rename it to say what it holds, e.g. data.csv"
    else:
        hint = "export the table as CSV (UTF-8), TSV, Parquet or Excel .xlsx"
    raise DataLoadError(
        f"{name!r} has an extension dpdash does not read ({suffix or 'none'}; it reads {known}): {hint}"
    )


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


# --- text: CSV and TSV -------------------------------------------------------------------------------


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

    bad_rows: list[object] = []  # the first few, to show
    n_bad = [0]

    def keep_bad_row(row: object) -> str:
        n_bad[0] += 1
        if len(bad_rows) < 3:
            bad_rows.append(row)
        return "skip"

    def read(use_threads: bool) -> pa.Table:
        return pv.read_csv(
            io.BytesIO(utf8),
            read_options=pv.ReadOptions(use_threads=use_threads),
            parse_options=pv.ParseOptions(
                delimiter=separator, newlines_in_values=True, invalid_row_handler=keep_bad_row
            ),
            convert_options=pv.ConvertOptions(strings_can_be_null=True),
        )

    try:
        table = read(use_threads=True)
        if n_bad[0]:
            # Threads do not know line numbers: read again, one thread, to name the lines.
            bad_rows.clear()
            n_bad[0] = 0
            read(use_threads=False)
    except pa.ArrowException as error:
        raise DataLoadError(
            f"{name!r} could not be read as {_SEPARATOR_NAMES[separator][:-1]}-separated text ({error}); "
            'check for an unclosed quote (") and save the table again as CSV'
        ) from error
    names = table.column_names
    if n_bad[0]:
        shown = "; ".join(
            f"line {row.number} has {row.actual_columns} field{'s' if row.actual_columns != 1 else ''}"
            f" ({_clip(row.text)})"
            for row in bad_rows[:3]
        )
        raise DataLoadError(
            f"{name!r} has {n_bad[0]} row{'s' if n_bad[0] != 1 else ''} whose number of values "
            f"differs from the header's {len(names)} ({_clip(', '.join(map(str, names)))}): {shown}. "
            f"Fix those rows (a missing or extra {_SEPARATOR_NAMES[separator][:-1]}, or one inside a value "
            "that needs quotes) and upload again"
        )
    if table.num_rows == 0:
        raise DataLoadError(
            f"{name!r} has a header ({_clip(', '.join(map(str, names)))}) but no data rows: "
            "add the rows below the header and upload again"
        )
    table = _without_empty_rows(table, name, warnings)
    frame = table.to_pandas(date_as_object=False)
    frame.columns = names  # to_pandas may mangle duplicates; _tidy renames them visibly
    return frame, encoding, separator


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


def _clip(text: str, limit: int = 60) -> str:
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- Parquet and Excel -------------------------------------------------------------------------------


def _read_parquet(data: bytes, name: str, warnings: list[str]) -> pd.DataFrame:
    import pyarrow.parquet as pq

    if not (data.startswith(b"PAR1") and data.endswith(b"PAR1")):
        raise DataLoadError(f"{name!r} is not a Parquet file: {_actually(data)}")
    try:
        table = pq.ParquetFile(pa.BufferReader(data)).read()  # read_table refuses duplicate names
    except (pa.ArrowException, OSError, ValueError) as error:
        raise DataLoadError(
            f"{name!r} is a damaged or unsupported Parquet file ({error}): write it again and upload that"
        ) from error
    names = table.column_names
    if table.num_rows == 0:
        raise DataLoadError(
            f"{name!r} has columns ({_clip(', '.join(map(str, names)))}) but no rows: "
            "upload a table with data"
        )
    table = _without_empty_rows(table, name, warnings)
    if len(set(names)) == len(names):
        frame = table.to_pandas(date_as_object=False)
        if not isinstance(frame.index, pd.RangeIndex):
            # pandas wrote its index: keep a named one as columns, drop plain row numbers.
            named = any(level is not None for level in frame.index.names)
            frame = frame.reset_index(drop=not named, allow_duplicates=True)
            names = list(frame.columns)
    else:
        renamed = table.rename_columns([f"c{i}" for i in range(len(names))])
        frame = renamed.to_pandas(ignore_metadata=True, date_as_object=False)
        frame.columns = names
    return frame


def _read_xlsx(data: bytes, name: str, max_bytes: int, warnings: list[str]) -> pd.DataFrame:
    if not data.startswith(b"PK\x03\x04"):
        raise DataLoadError(f"{name!r} is not an Excel .xlsx workbook: {_actually(data)}")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            unpacked = sum(info.file_size for info in archive.infolist())
    except zipfile.BadZipFile as error:
        raise DataLoadError(
            f"{name!r} is a damaged .xlsx workbook ({error}): save it again and upload that"
        ) from error
    if unpacked > _XLSX_MAX_EXPANSION * max_bytes:
        raise DataLoadError(
            f"{name!r} unpacks to {_size(unpacked)}, too large to read here: save the sheet as CSV or "
            "Parquet and upload that"
        )
    try:
        with pd.ExcelFile(io.BytesIO(data), engine="openpyxl") as workbook:
            sheets = workbook.sheet_names
            raw = pd.read_excel(workbook, sheet_name=sheets[0], header=None)
    except Exception as error:  # openpyxl raises many kinds (KeyError, InvalidFileException, ...)
        raise DataLoadError(
            f"{name!r} could not be read as an Excel .xlsx workbook ({type(error).__name__}: {error}): "
            "open it in your spreadsheet program, save it as .xlsx or .csv, and upload that"
        ) from error
    if len(sheets) > 1:
        warnings.append(
            f"{name!r} has {len(sheets)} sheets ({_clip(', '.join(sheets))}); only the first, "
            f"{sheets[0]!r}, was read: to use another, move it first or save it as CSV"
        )
    filled = raw.notna().any(axis=1).to_numpy()
    if filled.any():
        # Empty rows before the header or after the table are layout; empty rows inside it are said.
        first, last = np.flatnonzero(filled)[[0, -1]]
        inner_empty = int((~filled[first : last + 1]).sum())
        if inner_empty:
            warnings.append(_empty_rows_dropped(inner_empty))
    raw = raw.loc[filled].dropna(axis=1, how="all")
    if raw.empty:
        raise DataLoadError(f"{name!r}: the sheet {sheets[0]!r} is empty: put the table on the first sheet")
    names = ["" if pd.isna(value) else _cell_name(value) for value in raw.iloc[0]]
    if len(raw) == 1:
        raise DataLoadError(
            f"{name!r} has a header ({_clip(', '.join(names))}) but no data rows on the sheet "
            f"{sheets[0]!r}: add the rows below the header and upload again"
        )
    frame = raw.iloc[1:].reset_index(drop=True)
    frame.columns = names
    return frame.infer_objects()


def _cell_name(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _actually(data: bytes) -> str:
    found = _what_it_is(data)
    if found is not None:
        description, real_format = found
        rename = {"xlsx": " rename it to .xlsx if it is a workbook", "parquet": " rename it to .parquet"}
        return f"it looks like {description};" + rename.get(real_format or "", " upload the table itself")
    if _looks_like_text(data):
        return "it looks like text; if it is a CSV or TSV table, rename it to .csv or .tsv"
    return "its content is not that format; export the table as CSV (UTF-8) and upload that"


# --- names, empty rows and types ---------------------------------------------------------------------


def _tidy(frame: pd.DataFrame, name: str, warnings: list[str]) -> pd.DataFrame:
    """Unique, trimmed, NFC names; unnamed empty columns dropped; each said."""
    raw = ["" if value is None else str(value) for value in frame.columns]
    clean = [unicodedata.normalize("NFC", n).strip().strip("\u200b\ufeff").strip() for n in raw]
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
    trimmed = [(r, c) for r, c in zip(raw, clean, strict=True) if c and r != c]
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


def _settle_types(
    frame: pd.DataFrame, separator: str | None, warnings: list[str]
) -> tuple[pd.DataFrame, list[MixedColumn]]:
    """Give text-like columns their real type: numbers stored as text become numbers, decimal commas
    (in ;-separated files) become numbers, True/False become booleans, everything else text (``str``).
    Columns that are mostly numbers with some text stay text and are reported."""
    mixed = []
    columns = {}
    for column in frame.columns:
        s = frame[column]
        if not (s.dtype == object or pd.api.types.is_string_dtype(s.dtype)):
            continue
        values = s.dropna()
        if values.empty:
            continue
        if s.dtype == object and _all_bool(values):
            columns[column] = s.astype("boolean") if len(values) < len(s) else s.astype(bool)
            continue
        text = _text_of(s)
        if separator == ";" and _decimal_commas(text):
            columns[column] = pd.to_numeric(text.str.replace(",", ".", regex=False), errors="coerce")
            continue
        try:
            looks_numeric = pd.to_numeric(values.iloc[:_NUMBER_SAMPLE], errors="coerce").notna().mean() >= 0.5
        except (TypeError, ValueError):  # lists, dicts, dates: not numbers
            looks_numeric = False
        if not looks_numeric:
            if s.dtype == object:
                columns[column] = text
            continue
        numbers = pd.to_numeric(text.str.strip(), errors="coerce")
        bad = numbers.isna() & s.notna()
        n_bad = int(bad.sum())
        if n_bad == 0:
            columns[column] = numbers
            continue
        non_empty = len(values)
        if n_bad * 2 > non_empty:
            if s.dtype == object:
                columns[column] = text
            continue
        examples = tuple(dict.fromkeys(str(v) for v in s[bad].iloc[:1000]))[:_EXAMPLES]
        mixed.append(MixedColumn(str(column), n_bad, non_empty, examples))
        warnings.append(
            f"column {column!r} looks numeric, but {n_bad} of {non_empty} values are not numbers "
            f"(e.g. {', '.join(repr(e) for e in examples)}); it was kept as text. Fix those values in the "
            "file, or change the column's type to numeric and they become missing values"
        )
        columns[column] = text
    if columns:
        frame = frame.assign(**columns)
    return frame, mixed


def _as_text(s: pd.Series) -> pd.Series:
    """``s`` as a ``str`` column, missing values kept missing; whole floats written without ".0"."""

    def show(value: object) -> object:
        if (
            value is None
            or value is pd.NA
            or value is pd.NaT
            or (isinstance(value, float) and np.isnan(value))
        ):
            return np.nan
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        if isinstance(value, pd.Timestamp):
            return value.isoformat()
        return str(value)

    return pd.Series([show(v) for v in s.to_numpy(dtype=object)], index=s.index, dtype="str", name=s.name)


def _all_bool(values: pd.Series) -> bool:
    """Every value is a bool (checked on the head first, so text columns answer fast)."""

    def is_bool(v: object) -> bool:
        return isinstance(v, bool | np.bool_)

    return all(map(is_bool, values.iloc[:100])) and all(map(is_bool, values))


def _text_of(s: pd.Series) -> pd.Series:
    """``s`` itself when it is already a ``str`` column, else ``_as_text(s)``."""
    if s.dtype != object and pd.api.types.is_string_dtype(s.dtype):
        return s
    return _as_text(s)


def _decimal_commas(text: pd.Series) -> bool:
    values = text.dropna()
    return (
        not values.empty
        and bool(values.str.contains(",", regex=False).any())
        and bool(values.str.fullmatch(r"\s*[+-]?\d+(,\d+)?\s*").all())
    )


# --- column types ------------------------------------------------------------------------------------


def column_types(df: pd.DataFrame) -> dict[str, ColumnKind]:
    """A first guess of each column's kind, one of ``COLUMN_KINDS``.

    - ``boolean``: a bool column (or one holding only True/False values);
    - ``integer``: an integer column, or a float column with missing values whose other values are all
      whole numbers (how a file's integer column with gaps arrives);
    - ``numeric``: any other number;
    - ``datetime``: dates and times;
    - ``categorical``: text (or a pandas category) with at most ``MAX_CATEGORIES`` distinct values, each
      seen at least twice on average; ``text`` otherwise (names, ids, free text).

    The guess reads the data, so it is for the data owner's screen only; the kinds a person confirms
    are what the app should keep (calling this again after ``coerce_column`` guesses afresh).

    >>> column_types(pd.DataFrame({"n": [1, 2], "x": [0.5, 1.0], "c": ["a", "a"]}))
    {'n': 'integer', 'x': 'numeric', 'c': 'categorical'}
    """
    if not isinstance(df, pd.DataFrame):
        raise ParameterTypeError(f"df must be a pandas DataFrame, got df of type {type(df).__name__}")
    return {str(column): _kind(df[column]) for column in df.columns}


def _kind(s: pd.Series) -> ColumnKind:
    dtype = s.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "boolean"
    if isinstance(dtype, pd.CategoricalDtype):
        return "categorical"
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "datetime"
    if pd.api.types.is_integer_dtype(dtype):
        return "integer"
    if pd.api.types.is_float_dtype(dtype):
        values = s.to_numpy(dtype=float, na_value=np.nan)
        present = values[~np.isnan(values)]
        has_gaps = len(present) < len(values)
        whole = len(present) > 0 and bool(np.all(np.isfinite(present) & (present == np.round(present))))
        return "integer" if has_gaps and whole else "numeric"
    if pd.api.types.is_numeric_dtype(dtype):
        return "numeric"
    values = s.dropna()
    if values.empty:
        return "text"
    if isinstance(dtype, np.dtype) and dtype.kind == "O":
        if _all_bool(values):
            return "boolean"
        if all(isinstance(v, pd.Timestamp) for v in values):
            return "datetime"
    # A quick look at the head first: ids and free text have many distinct values.
    if values.iloc[: 4 * MAX_CATEGORIES].nunique() > MAX_CATEGORIES:
        return "text"
    distinct = values.nunique()
    return "categorical" if distinct <= MAX_CATEGORIES and 2 * distinct <= len(values) else "text"


# --- changing a column's type ------------------------------------------------------------------------

_TRUE = frozenset({"true", "t", "yes", "y", "1"})
_FALSE = frozenset({"false", "f", "no", "n", "0"})


def coerce_column(df: pd.DataFrame, column: str, kind: str, *, drop_invalid: bool = False) -> pd.DataFrame:
    """A copy of ``df`` with ``column`` converted to ``kind`` (one of ``COLUMN_KINDS``).

    Nothing is lost silently: if some non-missing values cannot be converted (text in a numeric column,
    2.5 in an integer column, "maybe" in a yes/no column, a date in an unknown format), a
    ``ColumnConversionError`` says how many and shows examples, unless ``drop_invalid`` is True, in
    which case those values become missing. Results: ``numeric`` → float64; ``integer`` → int64, or
    float64 when values are missing; ``boolean`` → bool, or pandas' nullable ``boolean`` with missing
    values (true/false, yes/no, y/n, t/f, 1/0 in any case); ``categorical`` and ``text`` → ``str``
    (never lossy); ``datetime`` → datetime64.

    >>> df = pd.DataFrame({"age": ["34", "51", "unknown"]})
    >>> coerce_column(df, "age", "integer", drop_invalid=True)["age"].tolist()
    [34.0, 51.0, nan]
    """
    if not isinstance(df, pd.DataFrame):
        raise ParameterTypeError(f"df must be a pandas DataFrame, got df of type {type(df).__name__}")
    if column not in df.columns:
        raise ParameterError(
            f"column must be one of the table's columns ({_clip(', '.join(map(str, df.columns)), 200)}), "
            f"got column={column!r}"
        )
    kind = check.one_of(kind, "kind", COLUMN_KINDS)
    s = df[column]
    present = s.notna()
    if kind in ("numeric", "integer"):
        if pd.api.types.is_datetime64_any_dtype(s.dtype):
            raise DataLoadError(f"column {column!r} holds dates, which dpdash does not turn into numbers")
        if pd.api.types.is_bool_dtype(s.dtype) or pd.api.types.is_numeric_dtype(s.dtype):
            converted = s.astype(float)
        else:
            converted = pd.to_numeric(_text_of(s).str.strip(), errors="coerce").astype(float)
        lost = present & converted.isna()
        what = "numbers"
        if kind == "integer":
            fractional = converted.notna() & (converted != np.round(converted))
            lost = lost | fractional
            what = "whole numbers"
            converted = converted.where(~fractional)
            if not converted.isna().any():
                converted = converted.astype(np.int64)
    elif kind == "boolean":
        if pd.api.types.is_bool_dtype(s.dtype):
            converted = s
        else:
            words = _text_of(s).str.strip().str.lower()
            converted = pd.Series(
                np.where(words.isin(_TRUE), True, np.where(words.isin(_FALSE), False, None)),
                index=s.index,
                dtype="boolean",
            )
        lost = present & converted.isna()
        what = "yes/no values (true/false, yes/no, y/n, t/f, 1/0)"
        if not converted.isna().any():
            converted = converted.astype(bool)
    elif kind == "datetime":
        if pd.api.types.is_datetime64_any_dtype(s.dtype):
            converted = s
        elif pd.api.types.is_numeric_dtype(s.dtype) or pd.api.types.is_bool_dtype(s.dtype):
            raise DataLoadError(
                f"column {column!r} holds numbers, which dpdash does not turn into dates: "
                "store the dates as text such as 2024-06-01 in the file"
            )
        else:
            with catch_warnings():
                simplefilter("ignore", UserWarning)  # "could not infer format": the count below says it
                converted = pd.to_datetime(_text_of(s).str.strip(), errors="coerce")
        lost = present & converted.isna()
        what = "dates in one format (such as 2024-06-01)"
    else:
        converted = _text_of(s)
        lost = pd.Series(False, index=s.index)
        what = "text"
    n_lost = int(lost.sum())
    if n_lost and not drop_invalid:
        becomes = "that value becomes" if n_lost == 1 else f"those {n_lost} values become"
        examples = tuple(dict.fromkeys(str(v) for v in s[lost].iloc[:1000]))[:_EXAMPLES]
        raise ColumnConversionError(
            f"column {column!r} cannot become {kind} without losing values: {n_lost} of {int(present.sum())} "
            f"values are not {what} (e.g. {', '.join(repr(e) for e in examples)}). Fix them in the file, "
            f"or convert anyway and {becomes} missing",
            column=str(column),
            kind=kind,
            invalid_count=n_lost,
            examples=examples,
        )
    out = df.copy(deep=False)
    out[column] = converted
    return out
