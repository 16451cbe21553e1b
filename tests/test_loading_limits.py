"""Issue 12: the work a file can cause is bounded by counting, the upload limit is stated once and in one
unit, long CSV fields load, and invisible characters in names are removed and said.

Every hostile file is built here, small in bytes; each refusal is shown to happen before the expensive
reader runs (the reader is replaced by one that fails the test), never by timing."""

from __future__ import annotations

import io
import tomllib
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dpdash.loading import MAX_UPLOAD_BYTES, MAX_UPLOAD_MB, DataLoadError, _limits, _parquet, load_table

ROOT = Path(__file__).resolve().parents[1]


def refused(data: bytes, filename: str) -> str:
    with pytest.raises(DataLoadError) as caught:
        load_table(data, filename)
    return str(caught.value)


@pytest.fixture
def no_openpyxl(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading the workbook fails the test: a refusal must come from the counting before it."""

    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("the workbook reached openpyxl")

    monkeypatch.setattr(pd, "ExcelFile", fail)


def workbook(sheet_data: str, shared: str = "", **extra_parts: str) -> bytes:
    """A minimal .xlsx written part by part: ``sheet_data`` inside <sheetData>, ``shared`` inside <sst>."""
    main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    package = "http://schemas.openxmlformats.org/package/2006"
    ct = "application/vnd.openxmlformats-officedocument.spreadsheetml"
    parts = {
        "[Content_Types].xml": f'<Types xmlns="{package}/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        f'<Override PartName="/xl/workbook.xml" ContentType="{ct}.sheet.main+xml"/>'
        f'<Override PartName="/xl/worksheets/sheet1.xml" ContentType="{ct}.worksheet+xml"/>'
        f'<Override PartName="/xl/sharedStrings.xml" ContentType="{ct}.sharedStrings+xml"/></Types>',
        "_rels/.rels": f'<Relationships xmlns="{package}/relationships"><Relationship Id="rId1" '
        f'Type="{rel}/officeDocument" Target="xl/workbook.xml"/></Relationships>',
        "xl/workbook.xml": f'<workbook xmlns="{main}" xmlns:r="{rel}"><sheets>'
        '<sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>',
        "xl/_rels/workbook.xml.rels": f'<Relationships xmlns="{package}/relationships">'
        f'<Relationship Id="rId1" Type="{rel}/worksheet" Target="worksheets/sheet1.xml"/>'
        f'<Relationship Id="rId2" Type="{rel}/sharedStrings" Target="sharedStrings.xml"/></Relationships>',
        "xl/worksheets/sheet1.xml": f'<worksheet xmlns="{main}"><sheetData>{sheet_data}</sheetData>'
        "</worksheet>",
        "xl/sharedStrings.xml": f'<sst xmlns="{main}">{shared}</sst>',
        **extra_parts,
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in parts.items():
            archive.writestr(name, '<?xml version="1.0" encoding="UTF-8"?>' + text)
    return buffer.getvalue()


GOOD_SHEET = (
    '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>'
    '<row r="2"><c r="A2"><v>1</v></c><c r="B2"><v>2.5</v></c></row>'
    '<row r="3"><c r="A3"><v>2</v></c><c r="B3"><v>3.5</v></c></row>'
)
GOOD_STRINGS = "<si><t>n</t></si><si><t>x</t></si>"


# --- item 7: Excel ----------------------------------------------------------------------------------


def test_the_hand_written_workbook_is_a_real_one() -> None:
    """The builder makes workbooks openpyxl reads: the refusals below are about size, not form."""
    table = load_table(workbook(GOOD_SHEET, GOOD_STRINGS), "good.xlsx")
    assert table.data.to_dict("list") == {"n": [1, 2], "x": [2.5, 3.5]}


def test_two_million_shared_strings_in_a_small_file_are_refused_by_counting(no_openpyxl: None) -> None:
    data = workbook(GOOD_SHEET, "<si><t>x</t></si>" * 2_000_000)
    assert len(data) < 200_000  # small in bytes: the danger is in the count
    message = refused(data, "strings.xlsx")
    assert f"more than {_limits.MAX_XLSX_STRINGS:,} shared strings" in message
    assert "save the sheet as CSV or Parquet" in message


def test_too_many_cells_on_the_sheet_are_refused_by_counting(
    no_openpyxl: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_limits, "MAX_XLSX_CELLS", 1000)
    cells = "".join(f'<row r="{r}"><c r="A{r}"><v>1</v></c></row>' for r in range(1, 1002))
    assert f"more than {1000:,} cells on its first sheet" in refused(workbook(cells), "cells.xlsx")


def test_a_far_away_cell_that_pandas_would_fill_up_to_is_refused(no_openpyxl: None) -> None:
    """Two filled cells, A1 and XFD1048576: pandas would build the 17-billion-cell rectangle."""
    sheet = '<row r="1"><c r="A1"><v>1</v></c></row><row r="1048576"><c r="XFD1048576"><v>1</v></c></row>'
    message = refused(workbook(sheet), "far.xlsx")
    assert "row 1,048,576, column 16,384" in message and "17,179,869,184" in message


def test_a_cell_beyond_excel_s_grid_is_damaged(no_openpyxl: None) -> None:
    sheet = '<row r="99999999"><c r="A99999999"><v>1</v></c></row>'
    assert "damaged .xlsx" in refused(workbook(sheet), "beyond.xlsx")


def test_millions_of_style_elements_are_refused_by_counting(no_openpyxl: None) -> None:
    styles = '<styleSheet><cellXfs>' + "<xf/>" * 5_000_000 + "</cellXfs></styleSheet>"
    data = workbook(GOOD_SHEET, GOOD_STRINGS, **{"xl/styles.xml": styles})
    assert "'xl/styles.xml'" in refused(data, "styles.xml.xlsx")


# --- item 7: Parquet --------------------------------------------------------------------------------


def parquet(table: pa.Table, **kwargs: object) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(table, buffer, **kwargs)
    return buffer.getvalue()


def test_a_parquet_text_value_repeated_beyond_the_unpacked_limit_is_refused_before_decoding() -> None:
    """One 1 MB value, 1 000 rows: about 1 MB on disk, 1 GB once decoded to one string per row."""
    value = pa.array(["x" * 1_000_000])
    column = pa.DictionaryArray.from_arrays(pa.array(np.zeros(1000, dtype=np.int32)), value)
    data = parquet(pa.table({"note": column}), compression="zstd", store_schema=False)
    assert len(data) < 100_000
    message = refused(data, "bomb.parquet")
    assert "unpacks to" in message and f"{_limits.MAX_UNPACKED_BYTES / 1e6:.1f} MB" in message


def test_parquet_cells_and_columns_are_checked_on_the_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_limits, "MAX_CELLS", 1000)
    monkeypatch.setattr(_parquet, "_decoded", lambda *a: pytest.fail("the data was read"))
    data = parquet(pa.table({"a": np.zeros(501), "b": np.zeros(501)}))
    assert "1,002 cells (rows × columns), above dpdash's limit of 1,000" in refused(data, "cells.parquet")
    wide = parquet(pa.table({f"c{i}": [1] for i in range(_limits.MAX_COLUMNS + 1)}))
    assert f"{_limits.MAX_COLUMNS + 1:,} columns" in refused(wide, "wide.parquet")


def test_nested_parquet_columns_are_refused_by_name() -> None:
    data = parquet(pa.table({"id": [1, 2], "tags": [[1, 2], [3]]}))
    message = refused(data, "nested.parquet")
    assert "1 nested column" in message and "'tags'" in message


def test_parquet_text_still_reads_as_text() -> None:
    frame = pd.DataFrame({"city": ["Zürich", "Oslo", None, "Oslo"], "n": [1, 2, 3, 4]})
    table = load_table(parquet(pa.Table.from_pandas(frame)), "cities.parquet")
    assert table.data["city"].tolist()[:2] == ["Zürich", "Oslo"] and table.column_types["n"] == "integer"
    assert not isinstance(table.data["city"].dtype, pd.CategoricalDtype)


# --- item 7: CSV ------------------------------------------------------------------------------------


def test_a_csv_header_wider_than_the_column_limit_is_refused_before_parsing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import pyarrow.csv as pv

    monkeypatch.setattr(pv, "read_csv", lambda *a, **k: pytest.fail("the file was parsed"))
    data = (",".join(f"c{i}" for i in range(_limits.MAX_COLUMNS + 1)) + "\n").encode() * 2
    assert f"{_limits.MAX_COLUMNS + 1:,} columns" in refused(data, "wide.csv")


def test_csv_cells_are_counted_before_pandas_sees_them(monkeypatch: pytest.MonkeyPatch) -> None:
    import dpdash.loading as loading

    monkeypatch.setattr(_limits, "MAX_CELLS", 1000)
    monkeypatch.setattr(loading, "_settle_types", lambda *a: pytest.fail("the table reached pandas"))
    data = b"a,b\n" + b"1,x\n" * 501
    assert "1,002 cells (rows × columns)" in refused(data, "cells.csv")


def test_millions_of_bad_rows_stop_being_counted_at_a_thousand() -> None:
    data = b"a,b,c\n" + b"1,2\n" * 100_000
    message = refused(data, "ragged.csv")
    assert "more than 1,000 rows whose number of values differs from the header's 3" in message
    assert "line 2 has 2 fields" in message


# --- item 11a: one upload limit in one unit --------------------------------------------------------


def test_the_upload_limit_is_decimal_and_the_same_everywhere() -> None:
    assert MAX_UPLOAD_BYTES == MAX_UPLOAD_MB * 1_000_000
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["maxUploadSize"] == MAX_UPLOAD_MB
    readme = (ROOT / "docs" / "app.md").read_text(encoding="utf-8")  # the app guide states the limit
    assert f"≤ {MAX_UPLOAD_MB} MB" in readme and f"{MAX_UPLOAD_BYTES:,}".replace(",", " ") in readme


def test_a_file_just_under_the_limit_passes_the_size_check_and_one_just_over_is_refused() -> None:
    under = bytes(MAX_UPLOAD_BYTES)  # zero bytes: past the size check, refused as not text
    assert "not text" in refused(under, "under.csv")
    over = bytes(MAX_UPLOAD_BYTES + 1)
    message = refused(over, "over.csv")
    assert "100.0 MB (100,000,001 bytes), above the limit of 100.0 MB (100,000,000 bytes)" in message


# --- item 11b: long fields and unclosed quotes -------------------------------------------------------


@pytest.mark.parametrize("quoted", [True, False])
def test_a_two_megabyte_text_field_loads(quoted: bool) -> None:
    text = "word " * 400_000
    field = f'"{text}"' if quoted else text
    rows = "".join(f"{i},short\n" for i in range(200_000))
    table = load_table(f"id,note\n{rows}-1,{field}\n{rows}".encode(), "long.csv")
    assert len(table.data) == 400_001 and len(table.data["note"].iloc[200_000]) == len(text)


@pytest.mark.parametrize("rest", [1, 300_000], ids=["small file", "more than a block after the quote"])
def test_an_unclosed_quote_is_named_with_its_line(rest: int) -> None:
    data = ('id,note\n1,ok\n2,"never closed\n' + "3,more\n" * rest).encode()
    message = refused(data, "open.csv")
    assert 'has a quote (") on line 3 that is never closed' in message


def test_a_last_value_with_a_closed_quoted_line_break_still_loads() -> None:
    table = load_table(b'id,note\n1,"two\nlines"\n', "closed.csv")
    assert table.data["note"].tolist() == ["two\nlines"]


# --- item 11c: invisible and control characters in names --------------------------------------------


def test_bidi_zero_width_and_control_characters_are_removed_from_column_names() -> None:
    names = ["\u202eega", "in\u200bcome", "\u2066region\u2069", "city\u200e", "note\u061c", "tab\there"]
    header = ",".join(f'"{n}"' for n in names)
    table = load_table(f"{header}\n1,2,a,b,c,d\n3,4,a,b,c,d\n".encode(), "names.csv")
    assert list(table.data.columns) == ["ega", "income", "region", "city", "note", "tab here"]
    warning = next(w for w in table.warnings if "invisible or control characters" in w)
    assert r"'\u202eega' → 'ega'" in warning and r"'in\u200bcome' → 'income'" in warning
    assert all(name.isprintable() for name in table.column_types)


def test_names_made_equal_by_the_removal_are_renamed_and_said() -> None:
    table = load_table("age,a\u200dge,\u200b\n30,31,x\n40,41,y\n".encode(), "twins.csv")
    assert list(table.data.columns) == ["age", "age_2", "column_3"]
    assert any("duplicate column names were renamed" in w and "'age_2'" in w for w in table.warnings)


def test_the_file_name_is_cleaned_too() -> None:
    table = load_table(b"a,b\n1,2\n", "invoice\u202egpj.csv")
    assert table.filename == "invoicegpj.csv"
    assert any(r"'invoice\u202egpj.csv' → 'invoicegpj.csv'" in w for w in table.warnings)


def test_ordinary_unicode_names_are_untouched_and_unwarned() -> None:
    table = load_table("größe,東京,naïve\n1,2,3\n".encode(), "plain.csv")
    assert list(table.data.columns) == ["größe", "東京", "naïve"] and table.warnings == ()
