"""Captures as tables: the Arrow schema of a message record, RecordBatches, pandas/Polars frames,
DuckDB relations, and Parquet/CSV/JSONL datasets of many captures (``godot-dissect export``)."""

from __future__ import annotations

from .arrow import reader, record_batches, to_arrow
from .frames import to_duckdb, to_pandas, to_polars
from .schema import BATCH_ROWS, COLUMNS, FILE_SCHEMA, SCHEMA, row_to_json

__all__ = ["BATCH_ROWS", "COLUMNS", "FILE_SCHEMA", "SCHEMA", "reader", "record_batches", "row_to_json", "to_arrow",
           "to_duckdb", "to_pandas", "to_polars"]
