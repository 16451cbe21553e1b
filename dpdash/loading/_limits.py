"""How much work one file may cause: the documented limits, and the one check that states them.

A file's size in bytes is not enough: a 1 MB workbook can hold twenty million shared strings, a few
kilobytes of Parquet can decode to gigabytes, and a CSV header can name a million columns. Each reader
counts what it will build (cells, columns, strings, XML elements, bytes once unpacked) from the file's
own structure *before* building it, stops counting as soon as a limit is passed, and refuses the file
with a message that states the limit and what to do.

Units are decimal: 1 MB = 1 000 000 bytes. Streamlit's upload widget counts ``server.maxUploadSize``
in the same unit in the browser (outside Windows), so ``.streamlit/config.toml`` sets it to
``MAX_UPLOAD_MB`` and docs/app.md states the same number.
"""

from __future__ import annotations

from dpdash.loading._common import DataLoadError, _count, _size

#: The largest file ``load_table`` accepts by default, in MB (decimal: 1 MB = 1 000 000 bytes).
MAX_UPLOAD_MB = 100
MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 1_000_000

#: The most cells (rows × columns) a table may have, in any format.
MAX_CELLS = 10_000_000
#: The most columns a table may have (Excel's own width, 16 384).
MAX_COLUMNS = 16_384
#: The most cells read from an Excel sheet: counted as cell elements in the sheet, and as the area from
#: A1 to the last filled row and column (openpyxl reads about 100 000 cells a second, so a larger
#: table should come as CSV or Parquet).
MAX_XLSX_CELLS = 1_000_000
#: The most shared strings (the text table every .xlsx keeps apart from its sheets).
MAX_XLSX_STRINGS = MAX_XLSX_CELLS
#: The most bytes a file may unpack to: an .xlsx's XML parts together, a Parquet file's decoded data.
MAX_UNPACKED_BYTES = 5 * MAX_UPLOAD_BYTES


def refuse_above(
    name: str, what: str, n: int, limit: int, *, at_least: bool = False, excel: bool = False
) -> None:
    """Raise the ``DataLoadError`` that says ``name`` has more ``what`` than ``limit`` (if it has).

    Args:
        name: the file's name, for the message.
        what: the thing counted, in the plural ("cells", "columns", "shared strings").
        n: how many were counted (a lower bound when ``at_least``: counting stopped past the limit).
        limit: the most allowed.
        at_least: counting stopped early, so the message says "more than ``limit``".
        excel: the limit is Excel's: the advice is to save the sheet as CSV or Parquet.
    """
    if n <= limit:
        return
    counted = f"more than {limit:,}" if at_least else f"{n:,}"
    advice = (
        f"save the sheet as CSV or Parquet (up to {MAX_CELLS:,} cells) and upload that"
        if excel
        else "keep only the rows and columns you need (or split the table), and upload again"
    )
    raise DataLoadError(f"{name!r} has {counted} {what}, above dpdash's limit of {limit:,}: {advice}")


def refuse_unpacked(name: str, n_bytes: int) -> None:
    """Raise the ``DataLoadError`` for a file whose content unpacks to more than ``MAX_UNPACKED_BYTES``."""
    limit = MAX_UNPACKED_BYTES
    if n_bytes > limit:
        raise DataLoadError(
            f"{name!r} unpacks to {_size(n_bytes)} ({_count(n_bytes, 'byte')}), above dpdash's limit "
            f"of {_size(limit)} once unpacked: keep only the rows and columns you need, save the table "
            "as CSV, and upload that"
        )
