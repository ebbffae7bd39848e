"""Captures as tables: the Arrow schema of a message record, RecordBatches, pandas/Polars frames,
DuckDB relations, and Parquet/CSV/JSONL datasets of many captures (``godot-dissect export``).

The names below load their module (and pyarrow) when first used: ``export`` settles how pyarrow
loads (``lean.py``) before anything imports it."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: name -> the module of this package that defines it
_HOMES = {"reader": "arrow", "record_batches": "arrow", "to_arrow": "arrow",
          "to_duckdb": "frames", "to_pandas": "frames", "to_polars": "frames",
          "BATCH_ROWS": "schema", "COLUMNS": "schema", "FILE_SCHEMA": "schema", "SCHEMA": "schema",
          "row_to_json": "schema"}

if TYPE_CHECKING:
    from .arrow import reader, record_batches, to_arrow
    from .frames import to_duckdb, to_pandas, to_polars
    from .schema import BATCH_ROWS, COLUMNS, FILE_SCHEMA, SCHEMA, row_to_json


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{home}", __name__), name)


__all__ = ["BATCH_ROWS", "COLUMNS", "FILE_SCHEMA", "SCHEMA", "reader", "record_batches", "row_to_json", "to_arrow",
           "to_duckdb", "to_pandas", "to_polars"]
