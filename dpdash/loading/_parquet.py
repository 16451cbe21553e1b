"""Parquet: checked on its metadata (columns, rows, nested types, unpacked size) before its data is read.

A Parquet file compresses and dictionary-encodes its values, so a few kilobytes can stand for gigabytes:
one long text value repeated ten million times is stored once. Text columns are therefore read still
dictionary-encoded, their decoded size is added up from the dictionary and the indices, and only then,
within ``MAX_UNPACKED_BYTES``, are they decoded.
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa

from dpdash.loading import _limits
from dpdash.loading._common import DataLoadError, _actually, _clip, _without_empty_rows

_TEXT_TYPES = (pa.types.is_string, pa.types.is_large_string, pa.types.is_binary, pa.types.is_large_binary)


def _read_parquet(data: bytes, name: str, warnings: list[str]) -> pd.DataFrame:
    import pyarrow.parquet as pq

    if not (data.startswith(b"PAR1") and data.endswith(b"PAR1")):
        raise DataLoadError(f"{name!r} is not a Parquet file: {_actually(data)}")
    try:
        # pyarrow bounds the footer itself (thrift_string_size_limit, thrift_container_size_limit).
        metadata_only = pq.ParquetFile(pa.BufferReader(data))
        schema = metadata_only.schema_arrow
        _check_metadata(metadata_only, schema, name)
        text = [field.name for field in schema if any(is_type(field.type) for is_type in _TEXT_TYPES)]
        # read_table refuses duplicate names, ParquetFile.read does not.
        table = pq.ParquetFile(pa.BufferReader(data), read_dictionary=text or None).read()
    except (pa.ArrowException, OSError, ValueError) as error:
        if isinstance(error, DataLoadError):
            raise
        raise DataLoadError(
            f"{name!r} is a damaged or unsupported Parquet file ({error}): write it again and upload that"
        ) from error
    table = _decoded(table, schema, name)
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


def _check_metadata(parquet_file: object, schema: pa.Schema, name: str) -> None:
    """Columns, nested types, cells and unpacked bytes, all from the footer: nothing decoded yet."""
    metadata = parquet_file.metadata  # type: ignore[attr-defined]
    _limits.refuse_above(name, "columns", max(metadata.num_columns, len(schema)), _limits.MAX_COLUMNS)
    nested = [field for field in schema if pa.types.is_nested(field.type)]
    if nested:
        shown = ", ".join(f"{field.name!r} ({field.type})" for field in nested[:5])
        raise DataLoadError(
            f"{name!r} has {len(nested)} nested column{'s' if len(nested) != 1 else ''} (lists, structs or "
            f"maps: {_clip(shown, 200)}), which dpdash does not read: write the table with one plain "
            "value per cell (or drop those columns) and upload again"
        )
    _limits.refuse_above(name, "cells (rows × columns)", metadata.num_rows * len(schema), _limits.MAX_CELLS)
    unpacked = sum(metadata.row_group(i).total_byte_size for i in range(metadata.num_row_groups))
    _limits.refuse_unpacked(name, unpacked)


def _decoded(table: pa.Table, schema: pa.Schema, name: str) -> pa.Table:
    """``table`` with the text columns read dictionary-encoded decoded again, once their decoded size
    (the length of each row's dictionary entry, added up) is known to be within the limit."""
    import pyarrow.compute as pc

    positions = [
        i
        for i, field in enumerate(schema)
        if pa.types.is_dictionary(table.schema.field(i).type) and not pa.types.is_dictionary(field.type)
    ]
    decoded_bytes = 0
    for i in positions:
        for chunk in table.column(i).chunks:
            lengths = pc.binary_length(chunk.dictionary)
            decoded_bytes += int(pc.sum(pc.take(lengths, chunk.indices)).as_py() or 0)
            _limits.refuse_unpacked(name, decoded_bytes)
    for i in positions:
        field = schema.field(i)
        table = table.set_column(i, field, table.column(i).cast(field.type))
    return table
