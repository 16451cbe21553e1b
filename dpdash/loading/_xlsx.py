"""Excel .xlsx: the workbook's parts are counted before openpyxl reads any of them.

An .xlsx is a ZIP of XML parts. openpyxl (what pandas uses) reads the whole shared-string table and the
first sheet cell by cell, at about 100 000 cells a second, and pandas then fills the rectangle from A1
to the last filled cell. So before either runs, ``_check_workbook`` streams the parts out of the ZIP and
counts, stopping as soon as a limit is passed:

- the parts' unpacked size (declared in the ZIP, which Python's ``zipfile`` never reads past), at most
  ``MAX_UNPACKED_BYTES``, and at most ``_MAX_PARTS`` parts;
- the shared strings (``<si>`` elements), at most ``MAX_XLSX_STRINGS``, and the XML elements of every
  part openpyxl parses besides the sheets, at most ``_MAX_ELEMENTS``;
- on the first sheet: the cells, the XML elements, and the area from A1 to the last filled row and
  column, each within ``MAX_XLSX_CELLS`` (or four times that for elements).
"""

from __future__ import annotations

import io
import re
import xml.parsers.expat
import zipfile
from collections.abc import Iterator

import numpy as np
import pandas as pd

from dpdash.loading import _limits
from dpdash.loading._common import DataLoadError, _actually, _clip, _empty_rows_dropped

_MAX_PARTS = 10_000
#: XML elements in the parts openpyxl parses other than the sheets (styles, workbook, shared strings...).
_MAX_ELEMENTS = 4 * _limits.MAX_XLSX_CELLS
_CHUNK = 1 << 20
_EXCEL_ROWS = 1_048_576
_EXCEL_COLUMNS = 16_384
_SHARED_STRING = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?si[\s/>]")
_CELL_REFERENCE = re.compile(r"([A-Za-z]{1,3})(\d{1,7})$")


class _TooMuch(Exception):
    """Raised inside the XML scan to stop it; carries what was counted."""

    def __init__(self, what: str, n: int, limit: int, *, at_least: bool = True) -> None:
        super().__init__(what)
        self.what, self.n, self.limit, self.at_least = what, n, limit, at_least


def _read_xlsx(data: bytes, name: str, warnings: list[str]) -> pd.DataFrame:
    if not data.startswith(b"PK\x03\x04"):
        raise DataLoadError(f"{name!r} is not an Excel .xlsx workbook: {_actually(data)}")
    _check_workbook(data, name)
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


# --- counting before reading -------------------------------------------------------------------------


def _check_workbook(data: bytes, name: str) -> None:
    """Refuse a workbook that would make openpyxl or pandas do more than the limits allow."""
    # Each part has a central-directory entry starting with these bytes: an upper bound, counted
    # before zipfile builds an object per entry.
    _limits.refuse_above(name, "parts in its ZIP archive", data.count(b"PK\x01\x02"), _MAX_PARTS, excel=True)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
            _limits.refuse_unpacked(name, sum(info.file_size for info in infos))
            sheets = [info for info in infos if _is_sheet(info.filename)]
            budget = _MAX_ELEMENTS
            for info in infos:
                if info.filename.endswith((".xml", ".rels")) and info not in sheets:
                    budget -= _count_elements(archive, info, budget, name)
            first = _first_sheet(data)
            if first is not None and first in archive.namelist():
                _scan_sheet(archive, first, name)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, KeyError, ValueError) as error:
        if isinstance(error, DataLoadError):
            raise
        raise DataLoadError(
            f"{name!r} is a damaged .xlsx workbook ({error}): save it again and upload that"
        ) from error


def _is_sheet(filename: str) -> bool:
    folder = filename.rsplit("/", 2)
    return len(folder) >= 2 and folder[-2] in ("worksheets", "chartsheets") and filename.endswith(".xml")


def _chunks(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Iterator[bytes]:
    with archive.open(info) as stream:
        while chunk := stream.read(_CHUNK):
            yield chunk


def _count_elements(archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: int, name: str) -> int:
    """The XML elements of one part (start tags: every "<" that does not open "</", "<?" or "<!"), and
    its shared strings if it is the shared-string table; refuses once either passes its limit."""
    shared = info.filename.rsplit("/", 1)[-1].lower().startswith("sharedstrings")
    elements = strings = 0
    carry = b""
    for chunk in _chunks(archive, info):
        buffer = carry + chunk
        cut = buffer.rfind(b"<")  # a tag cut in two is counted with the next chunk
        cut = len(buffer) if cut < 0 else cut
        part, carry = buffer[:cut], buffer[cut:]
        elements += part.count(b"<") - part.count(b"</") - part.count(b"<?") - part.count(b"<!")
        if shared:
            strings += len(_SHARED_STRING.findall(part))
            _limits.refuse_above(
                name, "shared strings (the workbook's table of text values)", strings,
                _limits.MAX_XLSX_STRINGS, at_least=True, excel=True,
            )  # fmt: skip
        if elements > budget:
            _too_many_elements(name, info.filename)
    elements += carry.count(b"<") - carry.count(b"</") - carry.count(b"<?") - carry.count(b"<!")
    if elements > budget:
        _too_many_elements(name, info.filename)
    return elements


def _too_many_elements(name: str, part: str) -> None:
    raise DataLoadError(
        f"{name!r} has more than {_MAX_ELEMENTS:,} XML elements outside its sheets (the part {part!r} "
        "passes that count), above dpdash's limit for Excel workbooks: save the sheet as CSV or Parquet "
        "and upload that"
    )


def _first_sheet(data: bytes) -> str | None:
    """The part name of the sheet pandas reads (the first in the workbook), as openpyxl finds it from
    the parts already counted (content types, workbook, relationships); ``None`` if it cannot, and then
    reading the workbook fails with its own message."""
    from openpyxl.reader.excel import ExcelReader

    try:
        reader = ExcelReader(io.BytesIO(data), read_only=True, data_only=True, keep_links=False)
        reader.read_manifest()
        reader.read_workbook()
        for _, relation in reader.parser.find_sheets():
            return relation.target
    except Exception:  # openpyxl raises many kinds; pandas' reading below reports the damage
        return None
    return None


def _scan_sheet(archive: zipfile.ZipFile, part: str, name: str) -> None:
    """Stream the sheet's XML: count elements and cells, and track the last filled row and column."""
    state = {"row": 0, "column": 0, "cells": 0, "elements": 0, "last_row": 0, "last_column": 0}

    def start(tag: str, attributes: dict[str, str]) -> None:
        tag = tag.rsplit(":", 1)[-1]
        state["elements"] += 1
        if state["elements"] > 4 * _limits.MAX_XLSX_CELLS:
            raise _TooMuch("XML elements on its first sheet", state["elements"], 4 * _limits.MAX_XLSX_CELLS)
        if tag == "row":
            given = attributes.get("r")
            state["row"] = int(given) if given and given.isdigit() else state["row"] + 1
            state["column"] = 0
            if state["row"] > _EXCEL_ROWS:
                raise ValueError(f"row {state['row']} is beyond Excel's last row, {_EXCEL_ROWS:,}")
        elif tag == "c":
            state["cells"] += 1
            if state["cells"] > _limits.MAX_XLSX_CELLS:
                raise _TooMuch("cells on its first sheet", state["cells"], _limits.MAX_XLSX_CELLS)
            found = _CELL_REFERENCE.match(attributes.get("r", ""))
            if found:
                state["column"] = _column_number(found.group(1))
                state["row"] = max(state["row"], int(found.group(2)))
            else:
                state["column"] += 1
            if state["column"] > _EXCEL_COLUMNS or state["row"] > _EXCEL_ROWS:
                raise ValueError(f"a cell lies beyond Excel's last column or row ({attributes.get('r')})")
        elif tag in ("v", "is", "f"):
            state["last_row"] = max(state["last_row"], state["row"])
            state["last_column"] = max(state["last_column"], state["column"])
            area = state["last_row"] * state["last_column"]
            if area > _limits.MAX_XLSX_CELLS:
                raise _TooMuch(
                    f"cells in the area of its first sheet from A1 to row {state['last_row']:,}, column "
                    f"{state['last_column']:,} (which pandas fills in)",
                    area,
                    _limits.MAX_XLSX_CELLS,
                    at_least=False,
                )

    parser = xml.parsers.expat.ParserCreate()
    parser.StartElementHandler = start
    try:
        for chunk in _chunks(archive, archive.getinfo(part)):
            parser.Parse(chunk, False)
        parser.Parse(b"", True)
    except _TooMuch as too_much:
        _limits.refuse_above(
            name, too_much.what, too_much.n, too_much.limit, at_least=too_much.at_least, excel=True
        )
    except xml.parsers.expat.ExpatError as error:
        raise ValueError(f"the sheet {part!r} is not well-formed XML: {error}") from error


def _column_number(letters: str) -> int:
    number = 0
    for letter in letters.upper():
        number = number * 26 + ord(letter) - ord("A") + 1
    return number
