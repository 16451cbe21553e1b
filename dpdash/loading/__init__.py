"""Reading an uploaded table: CSV, TSV, Parquet or Excel bytes → a DataFrame, its column types and warnings.

Everything a person can get wrong with a file ends in a ``DataLoadError`` (a ``DPDashError`` and a
``ValueError``) whose message names the file, says what is wrong and what to do; anything dpdash fixed
on its own (an encoding fallback, renamed duplicate columns, a sniffed separator) is listed in
``LoadedTable.warnings``, never done silently.

Decisions, so the app and docs/app.md can state them:

- **Size.** Files above ``MAX_UPLOAD_MB`` megabytes (decimal: 100 MB = 100 000 000 bytes, the unit
  Streamlit's upload widget uses) are refused before anything is parsed.
- **Work.** No file may make dpdash build more than it allows, whatever its size in bytes; each reader
  counts on the file's own structure before building anything, stops counting past the limit, and
  refuses with a message that states it (see ``dpdash/loading/_limits.py``): at most 10 000 000 cells
  and 16 384 columns in any format; a Parquet file's metadata is checked (rows × columns, unpacked size,
  no nested lists/structs/maps) and its text's decoded size added up before decoding; an .xlsx
  workbook's parts are streamed and counted (1 000 000 cells and 1 000 000 shared strings at most, no
  more than 500 MB unpacked) before openpyxl reads it. CSV/TSV text is bounded by its bytes; a field
  may be as long as the file.
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
  and nothing is lost). Unicode names are kept as they are, except for invisible and control
  characters (Unicode categories Cf, Cc, Zl, Zp: right-to-left overrides and other bidirectional
  controls, zero-width characters, tabs, line breaks), which can make a name display as something it
  is not; they are removed (line breaks and tabs become spaces) with a warning showing each name before
  and after, and a name they leave equal to another is renamed as a duplicate. The file's name is
  cleaned the same way.
- **Rows.** Rows with a different number of fields than the header are refused (they usually mean a
  separator inside an unquoted value, and guessing would shift values into the wrong columns), and so
  is a quote never closed (it would swallow every line after it into one value). Rows
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
from dataclasses import dataclass
from pathlib import PurePath

import pandas as pd

from dpdash import _validation as check
from dpdash.errors import ParameterTypeError
from dpdash.loading._common import FORMATS, UPLOAD_EXTENSIONS, DataLoadError, _size
from dpdash.loading._limits import MAX_UPLOAD_BYTES, MAX_UPLOAD_MB
from dpdash.loading._names import _clean_filename, _tidy
from dpdash.loading._parquet import _read_parquet
from dpdash.loading._text import _read_text
from dpdash.loading._types import (
    COLUMN_KINDS,
    MAX_CATEGORIES,
    ColumnConversionError,
    ColumnKind,
    MixedColumn,
    _settle_types,
    coerce_column,
    column_types,
)
from dpdash.loading._xlsx import _read_xlsx

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
    name_warnings: list[str] = []
    name = _clean_filename(PurePath(filename.replace("\\", "/")).name or filename, name_warnings)
    if len(data) > max_bytes:
        raise DataLoadError(
            f"{name!r} is {_size(len(data))} ({len(data):,} bytes), above the limit of {_size(max_bytes)} "
            f"({max_bytes:,} bytes): keep only the "
            "columns and rows you need, or save it as Parquet (usually much smaller), and upload again"
        )
    file_format = _format_of(name)
    if not data or data.isspace():
        raise DataLoadError(f"{name!r} is empty ({len(data)} bytes): choose a file that contains a table")

    warnings = name_warnings
    encoding = separator = None
    if file_format in ("csv", "tsv"):
        frame, encoding, separator = _read_text(data, name, file_format, warnings)
    elif file_format == "parquet":
        frame = _read_parquet(data, name, warnings)
    else:
        frame = _read_xlsx(data, name, warnings)

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
