"""Reading uploaded tables: every bad input of issue 6 ends in a DataLoadError that says what to do, every
automatic fix is a warning, and each format round-trips. All files are built in the tests."""

from __future__ import annotations

import hashlib
import io
import pickle

import numpy as np
import pandas as pd
import pytest

from dpdash import DPDashError, ParameterError, ParameterTypeError, loading
from dpdash.datasets import synthetic_patients
from dpdash.loading import (
    COLUMN_KINDS,
    MAX_UPLOAD_BYTES,
    MAX_UPLOAD_MB,
    UPLOAD_EXTENSIONS,
    ColumnConversionError,
    DataLoadError,
    LoadedTable,
    coerce_column,
    column_types,
    load_table,
)


def csv(text: str, encoding: str = "utf-8") -> bytes:
    return text.encode(encoding)


def xlsx(sheets: dict[str, pd.DataFrame], **kwargs) -> bytes:
    buffer = io.BytesIO()
    with pd.ExcelWriter(buffer, engine="openpyxl") as writer:
        for name, frame in sheets.items():
            frame.to_excel(writer, sheet_name=name, index=False, **kwargs)
    return buffer.getvalue()


def parquet(frame: pd.DataFrame, **kwargs) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, **kwargs)
    return buffer.getvalue()


def refused(data: bytes, filename: str, **kwargs) -> str:
    """The message of the DataLoadError that ``load_table`` raises; checks it names the file."""
    with pytest.raises(DataLoadError) as caught:
        load_table(data, filename, **kwargs)
    error = caught.value
    assert isinstance(error, DPDashError) and isinstance(error, ValueError)
    assert repr(filename.rsplit("/", 1)[-1]) in str(error)
    return str(error)


SAMPLE = pd.DataFrame(
    {
        "count": [3, 1, 4, 1, 5, 9],
        "amount": [2.5, 0.1, np.nan, 7.25, 1e6, -3.0],
        "city": ["Zürich", "東京", "Zürich", "東京", None, "Zürich"],
        "flag": [True, False, True, True, False, False],
        "when": pd.to_datetime(
            ["2024-01-31", "2024-02-29", "2023-12-01", "2024-06-01", "2024-06-02", "2020-01-01"]
        ),
    }
)
SAMPLE_KINDS = {
    "count": "integer",
    "amount": "numeric",
    "city": "categorical",
    "flag": "boolean",
    "when": "datetime",
}


# --- every bad input of the issue --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "looks_like"),
    [
        (xlsx({"Sheet1": SAMPLE}), "ZIP archive"),
        (parquet(SAMPLE), "Parquet"),
        (b"\x1f\x8b\x08\x00" + bytes(range(256)), "gzip"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(100), "Excel 97-2003"),
        (b"%PDF-1.7\n" + bytes(range(256)), "PDF"),
    ],
)
def test_a_binary_file_renamed_csv_says_what_it_is(data: bytes, looks_like: str) -> None:
    message = refused(data, "export.csv")
    assert "not a text table" in message and looks_like in message


def test_unknown_binary_content_is_refused() -> None:
    data = np.random.default_rng(0).integers(0, 256, 5_000, dtype=np.uint8).tobytes()
    assert "is not text" in refused(data, "scores.csv")


@pytest.mark.parametrize(
    ("data", "filename"),
    [(b"", "empty.csv"), (b"\n \r\n\t\n", "blank.csv"), (b"\xef\xbb\xbf", "bom.csv"), (b"", "e.parquet")],
)
def test_an_empty_file_is_refused(data: bytes, filename: str) -> None:
    assert "is empty" in refused(data, filename)


@pytest.mark.parametrize(
    ("data", "filename"),
    [
        (b"age,sex,region\n", "header.csv"),
        (b"age,sex,region", "header.csv"),
        (b"age\tsex\n", "header.tsv"),
        (xlsx({"Sheet1": SAMPLE.iloc[:0]}), "header.xlsx"),
        (parquet(SAMPLE.iloc[:0]), "header.parquet"),
    ],
)
def test_a_header_only_file_is_refused(data: bytes, filename: str) -> None:
    message = refused(data, filename)
    assert "no data rows" in message or "no rows" in message
    assert "age" in message or "count" in message  # the header is shown


def test_rows_with_every_value_empty_are_dropped_or_refused() -> None:
    table = load_table(csv("a,b\n1,2\n,\n3,4\n"), "gaps.csv")
    assert table.data["a"].tolist() == [1, 3] and table.column_types["a"] == "integer"
    assert any("1 row with every value empty was dropped" in w for w in table.warnings)
    assert "every row is empty" in refused(csv("a,b\n,\n,\n"), "nothing.csv")


def test_inconsistent_column_counts_name_the_lines() -> None:
    message = refused(csv("a,b,c\n1,2,3\n4,5\n6,7,8\n9,10,11,12\n"), "ragged.csv")
    assert "2 rows" in message and "header's 3" in message
    assert "line 3 has 2 fields (4,5)" in message and "line 5 has 4 fields (9,10,11,12)" in message
    assert "comma" in message


def test_an_unclosed_quote_is_refused() -> None:
    assert "quote" in refused(csv('a,b\n"1,2\n3,4\n'), "quote.csv")


def test_one_column_is_allowed_with_a_warning() -> None:
    table = load_table(csv("age\n34\n51\n29\n"), "ages.csv")
    assert table.data["age"].tolist() == [34, 51, 29]
    assert any("single column ('age')" in w and "separator" in w for w in table.warnings)


def test_cp1252_text_is_read_with_a_visible_warning() -> None:
    text = "name,city,price\nJosé,Zürich,3\nRené,Montréal,4\n“Bob”,Köln,5\n"
    table = load_table(text.encode("cp1252"), "customers.csv")
    assert table.encoding == "cp1252"
    assert table.data["city"].tolist() == ["Zürich", "Montréal", "Köln"]
    assert table.data["name"].tolist()[2] == "“Bob”"  # cp1252's curly quotes, not Latin-1 control codes
    (warning,) = table.warnings
    assert "not UTF-8" in warning and "Windows-1252" in warning and "'Zürich'" in warning


def test_bytes_cp1252_lacks_fall_back_to_latin1() -> None:
    table = load_table(b"code,label\n1,caf\xe9\x81\n", "odd.csv")
    assert table.encoding == "latin-1"
    assert "Latin-1" in table.warnings[0]


def test_mostly_utf8_keeps_utf8_and_marks_the_bad_byte() -> None:
    data = csv("name,city\nJosé,Zürich\nRené,Montréal\n") + b"Ann,Bo\xffn\n"
    table = load_table(data, "mostly.csv")
    assert table.data["city"].tolist() == ["Zürich", "Montréal", "Bo\ufffdn"]  # no mojibake elsewhere
    assert "1 invalid byte (first on line 4)" in table.warnings[0]


def test_text_encoded_twice_is_reported() -> None:
    twice = "name\nJosé\nZoë\n".encode().decode("latin-1").encode()
    table = load_table(twice, "twice.csv")
    assert any("encoded twice" in w and "JosÃ©" in w for w in table.warnings)


@pytest.mark.parametrize(("codec", "bom"), [("utf-8-sig", b"\xef\xbb\xbf"), ("utf-16", b"")])
def test_byte_order_marks_are_honoured(codec: str, bom: bytes) -> None:
    table = load_table("größe,wert\n1,2\n".encode(codec), "bom.csv")
    assert list(table.data.columns) == ["größe", "wert"] and table.encoding == codec
    assert table.warnings == ()


def test_unicode_column_names_are_kept() -> None:
    table = load_table(csv("Größe,年齢,α (rate),Ünïcödé\n1,2,3,4\n5,6,7,8\n"), "names.csv")
    assert list(table.data.columns) == ["Größe", "年齢", "α (rate)", "Ünïcödé"]
    assert table.warnings == ()


def test_decomposed_unicode_names_are_normalised() -> None:
    decomposed = "Gro\u0308\u00dfe"  # "Größe" with a combining diaeresis
    table = load_table(csv(f"{decomposed},x\n1,2\n"), "nfd.csv")
    assert list(table.data.columns) == ["Größe", "x"]


def test_duplicate_column_names_are_renamed_with_a_warning() -> None:
    table = load_table(csv("age,age, age ,age_2\n1,2,3,4\n5,6,7,8\n"), "dupes.csv")
    assert list(table.data.columns) == ["age", "age_3", "age_4", "age_2"]
    assert table.data["age_3"].tolist() == [2, 6]  # the second column, under its new name
    warning = next(w for w in table.warnings if "duplicate" in w)
    assert "column 2 'age' → 'age_3'" in warning and "column 3 'age' → 'age_4'" in warning
    assert any("trimmed" in w for w in table.warnings)


def test_blank_names_are_named_by_position_and_empty_unnamed_columns_dropped() -> None:
    table = load_table(csv(",b,\n1,2,\n3,4,\n"), "blank.csv")
    assert list(table.data.columns) == ["column_1", "b"]
    assert any("neither a name nor any value" in w for w in table.warnings)
    assert any("'column_1'" in w for w in table.warnings)


def test_a_numeric_column_with_text_is_kept_as_text_and_reported() -> None:
    rows = [str(v) for v in range(20)] + ["unknown", "n.a.", "unknown", "4O"]
    table = load_table(csv("age,id\n" + "".join(f"{v},{i}\n" for i, v in enumerate(rows))), "ages.csv")
    assert table.column_types["age"] == "text" and table.data["age"].iloc[-1] == "4O"
    (mixed,) = table.mixed_columns
    assert (mixed.column, mixed.non_numeric, mixed.non_empty) == ("age", 4, 24)
    assert mixed.examples == ("unknown", "n.a.", "4O")
    (warning,) = table.warnings
    assert "column 'age'" in warning and "4 of 24 values are not numbers" in warning and "'4O'" in warning
    numbers = coerce_column(table.data, "age", "numeric", drop_invalid=True)
    assert numbers["age"].isna().sum() == 4


def test_mostly_text_with_a_few_numbers_is_just_text() -> None:
    table = load_table(csv("code\nA1\nB2\n3\nC4\nD5\n"), "codes.csv")
    assert table.mixed_columns == () and table.column_types["code"] in ("text", "categorical")


def test_too_large_a_file_is_refused_before_parsing() -> None:
    message = refused(csv("a,b\n" + "1,2\n" * 1000), "big.csv", max_bytes=1000)
    assert "above the limit of 1.0 KB (1,000 bytes)" in message and "Parquet" in message
    assert MAX_UPLOAD_BYTES == MAX_UPLOAD_MB * 1_000_000 == 100_000_000


@pytest.mark.parametrize(
    ("filename", "hint"),
    [
        ("table.json", "export the table as CSV"),
        ("table.xls", "save it as .xlsx or .csv"),
        ("table.ods", "save it as .xlsx or .csv"),
        ("table.csv.gz", "unpack it first"),
        ("table", "no extension"),
    ],
)
def test_an_unknown_extension_is_refused_with_what_to_do(filename: str, hint: str) -> None:
    message = refused(csv("a,b\n1,2\n"), filename)
    assert hint in message and ".csv" in message and ".xlsx" in message


@pytest.mark.parametrize(
    ("data", "filename", "fragment"),
    [
        (csv("a,b\n1,2\n"), "text.xlsx", "rename it to .csv or .tsv"),
        (csv("a,b\n1,2\n"), "text.parquet", "rename it to .csv or .tsv"),
        (parquet(SAMPLE), "data.xlsx", "Parquet file; rename it to .parquet"),
        (xlsx({"S": SAMPLE}), "data.parquet", "rename it to .xlsx"),
        (b"PK\x03\x04" + bytes(200), "broken.xlsx", "damaged .xlsx"),
        (b"PAR1" + bytes(200) + b"PAR1", "broken.parquet", "damaged or unsupported Parquet"),
        (b"<!DOCTYPE html>\n<html><body>Sign in</body></html>", "page.csv", "web page (HTML)"),
    ],
)
def test_content_that_does_not_match_the_extension_is_refused(
    data: bytes, filename: str, fragment: str
) -> None:
    assert fragment in refused(data, filename)


def test_an_excel_zip_bomb_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loading._limits, "MAX_UNPACKED_BYTES", 1000)
    data = xlsx({"S": SAMPLE})
    assert "unpacks to" in refused(data, "bomb.xlsx")


def test_wrong_argument_types() -> None:
    with pytest.raises(ParameterTypeError, match="data must be the file's bytes, got data of type str"):
        load_table("a,b\n1,2\n", "x.csv")  # type: ignore[arg-type]
    with pytest.raises(ParameterTypeError, match="filename must be a string"):
        load_table(b"a,b\n1,2\n", None)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="max_bytes must be an integer >= 1, got max_bytes=0"):
        load_table(b"a,b\n1,2\n", "x.csv", max_bytes=0)


# --- separators and decimal commas ------------------------------------------------------------------


def test_a_semicolon_csv_with_decimal_commas() -> None:
    table = load_table(csv("name;weight;n\nAnn;61,5;1\nBo;80;2\n"), "eu.csv")
    assert table.separator == ";"
    assert table.data["weight"].tolist() == [61.5, 80.0] and table.column_types["weight"] == "numeric"
    assert "separated by semicolons, not commas" in table.warnings[0]


def test_a_tsv_that_is_really_comma_separated_and_a_txt_that_is_tab_separated() -> None:
    table = load_table(csv("a,b\n1,2\n"), "mislabelled.tsv")
    assert table.separator == "," and "separated by commas, not tabs" in table.warnings[0]
    table = load_table(csv("a\tb\n1\t2\n"), "export.txt")
    assert table.separator == "\t" and table.warnings == ()


def test_quoted_separators_and_newlines_stay_inside_values() -> None:
    table = load_table(csv('name,note\n"Smith, Ann","two\nlines"\nBo,x\n'), "quoted.csv")
    assert table.data["name"].tolist() == ["Smith, Ann", "Bo"]
    assert table.data["note"].tolist() == ["two\nlines", "x"]


# --- round trips -------------------------------------------------------------------------------------


def _check_sample(table: LoadedTable) -> None:
    data = table.data
    assert list(data.columns) == list(SAMPLE.columns)
    assert table.column_types == SAMPLE_KINDS
    assert data["count"].tolist() == SAMPLE["count"].tolist()
    np.testing.assert_array_equal(data["amount"].to_numpy(float), SAMPLE["amount"].to_numpy(float))
    assert data["city"].tolist()[:4] == ["Zürich", "東京", "Zürich", "東京"] and pd.isna(data["city"][4])
    assert data["flag"].tolist() == SAMPLE["flag"].tolist()
    assert (pd.to_datetime(data["when"]) == SAMPLE["when"]).all()


@pytest.mark.parametrize(
    ("filename", "write"),
    [
        ("sample.csv", lambda df: df.to_csv(index=False).encode()),
        ("sample.tsv", lambda df: df.to_csv(index=False, sep="\t").encode()),
        ("sample.parquet", parquet),
        ("sample.xlsx", lambda df: xlsx({"Data": df})),
    ],
)
def test_each_format_round_trips(filename: str, write) -> None:
    data = write(SAMPLE)
    table = load_table(data, filename)
    assert table.file_format == filename.rsplit(".", 1)[1]
    assert table.warnings == ()
    assert table.filename == filename and table.n_bytes == len(data)
    assert table.sha256 == hashlib.sha256(data).hexdigest()
    _check_sample(table)


@pytest.mark.parametrize("filename", ["p.csv", "p.parquet", "p.xlsx"])
def test_the_patient_example_round_trips(filename: str) -> None:
    original = synthetic_patients(n_rows=300).data
    data = {
        "p.csv": lambda: original.to_csv(index=False).encode(),
        "p.parquet": lambda: parquet(original),
        "p.xlsx": lambda: xlsx({"Sheet1": original}),
    }[filename]()
    table = load_table(data, filename)
    pd.testing.assert_frame_equal(table.data, original, check_dtype=False)
    assert table.column_types == {
        "person_id": "text",
        "age": "integer",
        "sex": "categorical",
        "region": "categorical",
        "diagnosis": "categorical",
        "diabetes": "categorical",
        # Excel stores numbers without a type: whole euros come back as integers.
        "income": "integer" if filename.endswith(".xlsx") else "numeric",
        "visits": "integer",
    }


def test_parquet_index_and_duplicate_names() -> None:
    named = load_table(parquet(SAMPLE.set_index("city")), "indexed.parquet")
    assert named.data.columns[0] == "city"  # a named index is data
    filtered = load_table(parquet(SAMPLE[SAMPLE["count"] > 1]), "filtered.parquet")
    assert list(filtered.data.columns) == list(SAMPLE.columns)  # pandas' row numbers are not
    import pyarrow as pa
    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    pq.write_table(pa.table([[1, 2], [3, 4]], names=["x", "x"]), buffer)
    table = load_table(buffer.getvalue(), "dupes.parquet")
    assert list(table.data.columns) == ["x", "x_2"] and table.data["x_2"].tolist() == [3, 4]


def test_excel_reads_the_first_sheet_and_says_so() -> None:
    data = xlsx({"People": SAMPLE, "Notes": pd.DataFrame({"n": ["x"]})})
    table = load_table(data, "book.xlsx")
    _check_sample(table)
    assert "2 sheets" in table.warnings[0] and "'People'" in table.warnings[0]


def test_excel_with_text_in_a_number_column_and_a_title_gap() -> None:
    frame = pd.DataFrame({"age": [34, 51, "#N/A?", 29, 40], "sex": ["f", "m", "f", "f", "m"]})
    buffer = io.BytesIO()
    with pd.ExcelWriter(buffer, engine="openpyxl") as writer:
        frame.to_excel(writer, index=False, startrow=2)  # two empty rows above the header
    table = load_table(buffer.getvalue(), "ages.xlsx")
    assert list(table.data.columns) == ["age", "sex"]
    assert table.mixed_columns[0].examples == ("#N/A?",)
    assert table.data["age"].tolist() == ["34", "51", "#N/A?", "29", "40"]


def test_excel_empty_sheet() -> None:
    assert "is empty" in refused(xlsx({"Sheet1": pd.DataFrame()}), "blank.xlsx")


def test_loaded_tables_pickle_for_the_app_cache() -> None:
    table = load_table(SAMPLE.to_csv(index=False).encode(), "s.csv")
    copy = pickle.loads(pickle.dumps(table))
    pd.testing.assert_frame_equal(copy.data, table.data)
    assert copy.column_types == table.column_types


def test_bytearray_and_memoryview_and_folders_in_the_name() -> None:
    data = SAMPLE.to_csv(index=False).encode()
    assert load_table(bytearray(data), "C:\\Users\\ann\\s.csv").filename == "s.csv"
    assert load_table(memoryview(data), "/tmp/s.csv").data.shape == SAMPLE.shape


def test_upload_extensions_cover_the_formats() -> None:
    assert {"csv", "tsv", "parquet", "xlsx"} <= set(UPLOAD_EXTENSIONS)


# --- column types ------------------------------------------------------------------------------------


def test_column_types_guesses() -> None:
    df = pd.DataFrame(
        {
            "int": [1, 2, 3, 4],
            "int_with_gaps": [1.0, np.nan, 3.0, 4.0],
            "float": [1.0, 2.0, 3.0, 4.0],
            "fraction": [0.5, np.nan, 1.5, 2.0],
            "bool": [True, False, True, True],
            "bool_with_gaps": [True, None, False, True],
            "category": pd.Categorical(["a", "b", "a", "a"]),
            "few": ["x", "y", "x", "x"],
            "ids": ["p1", "p2", "p3", "p4"],
            "empty": [None, None, None, None],
            "when": pd.to_datetime(["2024-01-01"] * 4),
            "when_tz": pd.to_datetime(["2024-01-01"] * 4).tz_localize("UTC"),
        }
    )
    assert column_types(df) == {
        "int": "integer",
        "int_with_gaps": "integer",
        "float": "numeric",
        "fraction": "numeric",
        "bool": "boolean",
        "bool_with_gaps": "boolean",
        "category": "categorical",
        "few": "categorical",
        "ids": "text",
        "empty": "text",
        "when": "datetime",
        "when_tz": "datetime",
    }
    assert set(column_types(df).values()) == set(COLUMN_KINDS)


def test_many_distinct_values_are_text() -> None:
    n = 10 * loading.MAX_CATEGORIES
    df = pd.DataFrame({"many": [f"v{i % (loading.MAX_CATEGORIES + 1)}" for i in range(n)]})
    assert column_types(df) == {"many": "text"}
    df = pd.DataFrame({"enough": [f"v{i % loading.MAX_CATEGORIES}" for i in range(n)]})
    assert column_types(df) == {"enough": "categorical"}


def test_column_types_needs_a_dataframe() -> None:
    with pytest.raises(ParameterTypeError, match="df must be a pandas DataFrame"):
        column_types([1, 2])  # type: ignore[arg-type]


# --- changing a column's type ------------------------------------------------------------------------


def test_coerce_refuses_to_drop_values_and_says_how_many() -> None:
    df = pd.DataFrame({"age": pd.array(["34", "51", "unknown", None, "n/a?", "29"], dtype="str")})
    with pytest.raises(ColumnConversionError) as caught:
        coerce_column(df, "age", "integer")
    error = caught.value
    assert isinstance(error, DataLoadError) and isinstance(error, ValueError)
    assert (error.column, error.kind, error.invalid_count) == ("age", "integer", 2)
    assert error.examples == ("unknown", "n/a?")
    assert "2 of 5 values are not whole numbers" in str(error) and "become missing" in str(error)
    converted = coerce_column(df, "age", "integer", drop_invalid=True)
    assert converted["age"].tolist()[:2] == [34.0, 51.0] and converted["age"].isna().sum() == 3
    assert column_types(converted)["age"] == "integer"
    assert df["age"].tolist()[2] == "unknown"  # the input is not modified


def test_coerce_integer_refuses_fractions_and_gives_int64_when_complete() -> None:
    df = pd.DataFrame({"n": [1.0, 2.5, 3.0], "m": ["1", "2", "3"]})
    with pytest.raises(ColumnConversionError, match=r"1 of 3 values are not whole numbers \(e.g. '2.5'\)"):
        coerce_column(df, "n", "integer")
    assert coerce_column(df, "m", "integer")["m"].dtype == np.int64


def test_coerce_numeric_boolean_text_and_dates() -> None:
    df = pd.DataFrame(
        {
            "x": [" 1.5", "2", "3e2"],
            "yes": ["Yes", "no", "Y"],
            "maybe": ["yes", "maybe", "no"],
            "n": [1.0, 2.0, np.nan],
            "d": ["2024-01-31", "2024-02-29", "not a date"],
        }
    )
    assert coerce_column(df, "x", "numeric")["x"].tolist() == [1.5, 2.0, 300.0]
    assert coerce_column(df, "yes", "boolean")["yes"].tolist() == [True, False, True]
    with pytest.raises(ColumnConversionError, match="1 of 3 values are not yes/no values"):
        coerce_column(df, "maybe", "boolean")
    maybe = coerce_column(df, "maybe", "boolean", drop_invalid=True)["maybe"]
    assert maybe.dtype == "boolean" and maybe.isna().sum() == 1
    back = coerce_column(pd.DataFrame({"maybe": maybe}), "maybe", "text")["maybe"]
    assert back.tolist()[::2] == ["True", "False"] and pd.isna(back.iloc[1])  # missing stays missing
    text = coerce_column(df, "n", "categorical")["n"]
    assert text.tolist()[:2] == ["1", "2"] and pd.isna(text.iloc[2])
    with pytest.raises(ColumnConversionError, match="'not a date'"):
        coerce_column(df, "d", "datetime")
    dates = coerce_column(df, "d", "datetime", drop_invalid=True)["d"]
    assert dates.iloc[1] == pd.Timestamp("2024-02-29") and pd.isna(dates.iloc[2])


def test_coerce_refuses_meaningless_conversions() -> None:
    df = pd.DataFrame({"n": [1, 2], "d": pd.to_datetime(["2024-01-01", "2024-01-02"])})
    with pytest.raises(DataLoadError, match="holds numbers"):
        coerce_column(df, "n", "datetime")
    with pytest.raises(DataLoadError, match="holds dates"):
        coerce_column(df, "d", "numeric")
    with pytest.raises(ParameterError, match=r"column must be one of the table's columns \(n, d\)"):
        coerce_column(df, "age", "numeric")
    with pytest.raises(ParameterError, match="kind must be one of"):
        coerce_column(df, "n", "float")
