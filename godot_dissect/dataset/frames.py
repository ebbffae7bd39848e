"""pandas and Polars frames and DuckDB relations over a capture or an exported dataset."""

from __future__ import annotations

import itertools
import json
import os
import re
import secrets
from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa

from .arrow import reader, unencodable_escaped
from .layout import FORMATS, PARTITION, capture_of, dataset_glob, dataset_parts, is_dataset, part_format
from .schema import BATCH_ROWS, FILE_SCHEMA, SCHEMA, json_to_row

#: DuckDB's options for a dataset's part files: the capture column comes from the Hive directory
#: names, always as text (a capture named 2024-05-01 would otherwise become a DATE)
_HIVE = "hive_partitioning = true, hive_types = {'capture': VARCHAR}"
#: CSV parts as pyarrow's CSVWriter writes them: a header, every column typed by the schema, a null
#: is an empty field and a quoted empty field an empty string
_CSV = "header = true, auto_detect = false, allow_quoted_nulls = false, columns = {columns}"


def _table(path: str | Iterable[str], **read_options: Any) -> pa.Table:
    return reader(path, **read_options).read_all()


def _parquet_only(path: str) -> bool:
    """A dataset folder of Parquet parts alone (pyarrow and Polars read those themselves)."""
    parts = dataset_parts(path)
    return not any(files for fmt, files in parts.items() if fmt != "parquet")


def _dataset_table(path: str) -> pa.Table:
    """A dataset folder with CSV or JSONL parts, through :func:`to_duckdb`."""
    import duckdb

    with duckdb.connect() as con:
        return to_duckdb(path, con).to_arrow_table().cast(SCHEMA)


def to_pandas(path: str, **read_options: Any) -> Any:
    """A pandas DataFrame of a capture (read now) or of an exported dataset folder, with pyarrow
    dtypes (nullable integers, UTC microsecond timestamps, exact strings)."""
    import pandas as pd

    if is_dataset(path) and _parquet_only(path):
        return pd.read_parquet(path, dtype_backend="pyarrow")
    table = _dataset_table(path) if is_dataset(path) else _table(path, **read_options)
    return table.to_pandas(types_mapper=pd.ArrowDtype)


def to_polars(path: str, **read_options: Any) -> Any:
    """A Polars DataFrame of a capture or of an exported dataset folder."""
    try:
        import polars as pl
    except ImportError as e:  # an optional dependency
        raise ImportError("to_polars needs Polars: pip install 'godot-dissect[dataset]'") from e
    if is_dataset(path) and _parquet_only(path):
        return pl.scan_parquet(dataset_glob(path), hive_partitioning=True,
                               hive_schema={"capture": pl.String}).collect()
    return pl.from_arrow(_dataset_table(path) if is_dataset(path) else _table(path, **read_options))


def to_duckdb(path_or_dataset: str | Iterable[str], con: Any = None, **read_options: Any) -> Any:
    """A DuckDB relation with the columns of :data:`SCHEMA` over exported datasets (folders; their
    Parquet and CSV parts are read by DuckDB itself, JSONL parts here), part files, and captures (read
    now), in any mix; the temporary tables live in ``con`` (default: DuckDB's default connection)."""
    import duckdb

    con = con if con is not None else duckdb.default_connection()
    paths = [path_or_dataset] if isinstance(path_or_dataset, (str, os.PathLike)) else list(path_or_dataset)
    parts: dict[str, list[str]] = {fmt: [] for fmt in FORMATS}
    captures: list[str] = []
    for p in map(os.fspath, paths):
        if is_dataset(p):
            for fmt, files in dataset_parts(p).items():
                parts[fmt] += files
        elif (fmt := part_format(p)) is not None:
            parts[fmt].append(p)
        else:
            captures.append(p)
    scans = []
    if parts["parquet"]:
        _check_parquet_parts(parts["parquet"])
        scans.append(f"read_parquet({_sql_paths(parts['parquet'])}, {_HIVE})")
    if parts["csv"]:
        types = con.from_arrow(FILE_SCHEMA.empty_table())
        columns = "{" + ", ".join(f"{_sql_str(c)}: {_sql_str(str(t))}" for c, t in zip(types.columns, types.types,
                                                                                          strict=True)) + "}"
        scans.append(f"read_csv({_sql_paths(parts['csv'])}, {_HIVE}, {_CSV.format(columns=columns)})")
    if parts["jsonl"] or captures or not scans:
        # batch by batch from here, so a capture that fails raises its own error (not one from inside DuckDB)
        scans.append(_read_here(con, _jsonl_batches(parts["jsonl"]), reader(captures, **read_options)))
    selects = []
    for scan in scans:
        have = set(con.sql(f"SELECT * FROM {scan} LIMIT 0").columns)  # a lone part file has no capture folder
        cols = ", ".join(_sql_name(c) if c in have else f"NULL::VARCHAR AS {_sql_name(c)}" for c in SCHEMA.names)
        selects.append(f"SELECT {cols} FROM {scan}")
    return con.sql(" UNION ALL ".join(selects))


def _check_parquet_parts(files: list[str]) -> None:
    """Each Parquet part has the columns and types of :data:`FILE_SCHEMA` (DuckDB would read a part of
    another shape by position into these columns, or fail with no file named): else a ValueError naming it."""
    import pyarrow.parquet as pq

    want = [(f.name, f.type) for f in FILE_SCHEMA]
    for path in files:
        try:
            have = [(f.name, f.type) for f in pq.read_schema(path)]
        except (pa.ArrowException, OSError) as e:
            raise ValueError(f"{path}: not a Parquet part of an exported dataset: {e}") from None
        if have != want:
            missing = [n for n, _ in want if n not in dict(have)]
            extra = [n for n, _ in have if n not in dict(want)]
            what = "; ".join(f"{label} {', '.join(names[:5])}{' ...' if len(names) > 5 else ''}"
                             for label, names in (("no column", missing), ("unknown column", extra)) if names)
            what = what or "column types or order differ"
            raise ValueError(f"{path}: not a part of an exported dataset ({what})")


def _read_here(con: Any, *sources: Iterable[pa.RecordBatch]) -> str:
    """A temporary table of ``con`` filled with the batches of ``sources``; its name."""
    name = f"godot_messages_{secrets.token_hex(6)}"
    con.register(name + "_batch", SCHEMA.empty_table())
    con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT * FROM {name}_batch")
    try:
        for batch in itertools.chain(*sources):
            con.register(name + "_batch", batch)
            con.execute(f"INSERT INTO {name} SELECT * FROM {name}_batch")
    finally:
        con.unregister(name + "_batch")
    return name


def _jsonl_batches(files: list[str], batch_rows: int = BATCH_ROWS) -> Iterator[pa.RecordBatch]:
    """The rows of JSONL parts (``read --format jsonl`` lines) as batches of :data:`SCHEMA`."""
    for path in files:
        folder = os.path.basename(os.path.dirname(path))
        capture = capture_of(folder) if folder.startswith(f"{PARTITION}=") else None
        with open(path, encoding="utf-8") as f:
            first = 1
            while lines := list(itertools.islice(f, batch_rows)):
                rows = [_jsonl_row(line, capture, f"{path}:{n}") for n, line in enumerate(lines, first) if line.strip()]
                first += len(lines)
                number = first - 1
                try:
                    try:
                        batch = pa.RecordBatch.from_pylist(rows, schema=SCHEMA)
                    except UnicodeEncodeError:  # a lone surrogate (a Godot 3 String's) raw in a text or name
                        batch = pa.RecordBatch.from_pylist([_escaped(row) for row in rows], schema=SCHEMA)
                except (pa.ArrowException, TypeError, ValueError) as e:  # a key of the wrong type
                    raise ValueError(f"{path}: lines up to {number}: {e}") from None
                yield batch


def _escaped(row: dict[str, Any]) -> dict[str, Any]:
    """A row with every string's lone surrogates escaped as a capture's export writes them."""
    return {k: unencodable_escaped(v) if type(v) is str else v for k, v in row.items()}


def _jsonl_row(line: str, capture: str | None, where: str) -> dict[str, Any]:
    try:
        record = json.loads(line)
        if not isinstance(record, dict) or not isinstance(record.get("kind"), str):
            raise ValueError("not a record of `read --format jsonl` (an object with a kind)")
        return json_to_row(record, capture)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{where}: {e}") from None
    except RecursionError:  # a hostile part: json.loads recurses per level (records stay far shallower)
        raise ValueError(f"{where}: nested deeper than a record of `read --format jsonl` can be") from None


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _sql_name(s: str) -> str:
    return '"' + s.replace('"', '""') + '"'


#: what DuckDB's file readers expand in a path (``*``, ``**``, ``?``, ``[abc]``)
_GLOB_CHARACTERS = re.compile(r"([*?\[])")


def _sql_paths(paths: list[str]) -> str:
    """File paths as a DuckDB list literal, each naming that file alone: DuckDB reads every path as a glob
    pattern (a dataset folder named ``o*t`` would read its siblings' parts too), so ``*``, ``?`` and ``[``
    stand in brackets, the glob's way of saying the character itself."""
    return "[" + ", ".join(_sql_str(_GLOB_CHARACTERS.sub(r"[\1]", p)) for p in paths) + "]"
