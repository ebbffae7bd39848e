"""pandas and Polars frames and DuckDB relations over a capture or an exported dataset."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import pyarrow as pa

from .arrow import reader
from .layout import dataset_glob, is_dataset
from .schema import SCHEMA

#: DuckDB's reading of an exported dataset: the capture column comes from the Hive directory names,
#: always as text (a capture named 2024-05-01 would otherwise become a DATE)
_DUCKDB_SCAN = "read_parquet({glob}, hive_partitioning = true, hive_types = {{'capture': VARCHAR}})"


def _table(path: str | Iterable[str], **read_options: Any) -> pa.Table:
    return reader(path, **read_options).read_all()


def to_pandas(path: str, **read_options: Any) -> Any:
    """A pandas DataFrame of a capture (read now) or of an exported dataset folder, with pyarrow
    dtypes (nullable integers, UTC microsecond timestamps, exact strings)."""
    import pandas as pd

    if is_dataset(path):
        return pd.read_parquet(path, dtype_backend="pyarrow")
    return _table(path, **read_options).to_pandas(types_mapper=pd.ArrowDtype)


def to_polars(path: str, **read_options: Any) -> Any:
    """A Polars DataFrame of a capture or of an exported dataset folder."""
    try:
        import polars as pl
    except ImportError as e:  # an optional dependency
        raise ImportError("to_polars needs Polars: pip install 'godot-dissect[dataset]'") from e
    if is_dataset(path):
        return pl.scan_parquet(dataset_glob(path), hive_partitioning=True,
                               hive_schema={"capture": pl.String}).collect()
    return pl.from_arrow(_table(path, **read_options))


def to_duckdb(path_or_dataset: str | Iterable[str], con: Any = None, **read_options: Any) -> Any:
    """A DuckDB relation: over an exported dataset folder or Parquet file (read by DuckDB itself),
    or over captures read now into a temporary table of ``con`` (default: DuckDB's default connection)."""
    import duckdb

    con = con if con is not None else duckdb.default_connection()
    paths = [path_or_dataset] if isinstance(path_or_dataset, (str, os.PathLike)) else list(path_or_dataset)
    paths = [os.fspath(p) for p in paths]
    parquet = [is_dataset(p) or p.endswith(".parquet") for p in paths]
    if any(parquet) and not all(parquet):
        raise ValueError("give exported datasets (folders, .parquet files) or captures, not both")
    if all(parquet):
        globs = [dataset_glob(p) if is_dataset(p) else p for p in paths]
        return con.sql("SELECT * FROM " + _DUCKDB_SCAN.format(glob=_sql_list(globs)))
    # batch by batch from here, so a capture that fails raises its own error (not one from inside DuckDB)
    name = f"godot_messages_{id(paths):x}"
    con.register(name + "_batch", SCHEMA.empty_table())
    con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT * FROM {name}_batch")
    try:
        for batch in reader(paths, **read_options):
            con.register(name + "_batch", batch)
            con.execute(f"INSERT INTO {name} SELECT * FROM {name}_batch")
    finally:
        con.unregister(name + "_batch")
    return con.table(name)


def _sql_list(items: list[str]) -> str:
    quoted = ["'" + s.replace("'", "''") + "'" for s in items]
    return quoted[0] if len(quoted) == 1 else "[" + ", ".join(quoted) + "]"
