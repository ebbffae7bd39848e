"""``export``: captures to a Parquet/CSV/JSONL dataset, on many cores or a Dask cluster;
``query``: DuckDB SQL over a dataset or captures (table ``messages``)."""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import sys
from collections.abc import Iterator
from typing import Any

from ..dataset.layout import PARQUET_COMPRESSION, PARQUET_COMPRESSIONS
from .options import add_read_options, read_options, usage_error

#: table width when the output is not a terminal (rich would squeeze it into 80 columns)
PIPE_WIDTH = 200
#: rows of a query result fetched from DuckDB at a time
QUERY_FETCH_ROWS = 10_000


def register(sub: argparse._SubParsersAction) -> None:
    e = sub.add_parser("export", help="captures to a Parquet (or CSV, JSONL) dataset, one file per capture",
                       description="Convert captures into OUT/capture=NAME/part-0.FORMAT (a Hive-style dataset "
                                   "DuckDB, pandas, Polars and Spark read as one table), one task per capture: "
                                   "in parallel processes, or on a Dask cluster with --scheduler.")
    e.add_argument("captures", nargs="+", metavar="CAPTURE",
                   help="capture files, or folders: the captures in them and their subfolders")
    e.add_argument("-o", "--output", required=True, metavar="OUT", help="the dataset folder (made if missing)")
    e.add_argument("--format", "-f", choices=("parquet", "csv", "jsonl"), default="parquet")
    e.add_argument("--workers", "-j", type=int, default=None,
                   help="processes converting captures at once (default: the machine's cores)")
    e.add_argument("--scheduler", metavar="ADDRESS",
                   help="a Dask distributed scheduler (tcp://HOST:8786) to run the tasks; OUT must be a path "
                        "every worker can write")
    e.add_argument("--batch-rows", type=int, default=None, help="rows per Arrow batch / Parquet row group")
    e.add_argument("--compression", choices=PARQUET_COMPRESSIONS, default=PARQUET_COMPRESSION,
                   help=f"Parquet compression codec (default {PARQUET_COMPRESSION}: quick to write, read "
                        "everywhere; zstd: files about half as big for some 5%% more CPU)")
    e.add_argument("--verbose", "-v", action="store_true",
                   help="one line per capture on stderr as it finishes: messages, seconds, CPU seconds")
    add_read_options(e)
    e.set_defaults(run=run_export)

    q = sub.add_parser("query", help="DuckDB SQL over an exported dataset or captures (table `messages`)",
                       description="Run SQL over the table `messages`: an exported dataset folder or Parquet "
                                   "file is read by DuckDB; a capture is read now.")
    q.add_argument("sources", nargs="+", metavar="OUT_OR_CAPTURE")
    q.add_argument("sql", metavar="SQL")
    q.add_argument("--format", "-f", choices=("table", "csv", "json"), default="table")
    add_read_options(q)
    q.set_defaults(run=run_query)


def run_export(args: argparse.Namespace) -> int:
    from ..dataset.lean import pyarrow_without_numpy, pyarrow_without_pandas

    if args.scheduler is None:  # this process and the pool forked from it only convert: no numpy
        pyarrow_without_numpy()
    else:
        pyarrow_without_pandas()
    from ..dataset.engines import export, load_modules
    from ..dataset.inputs import captures_in
    from ..dataset.schema import BATCH_ROWS

    captures = list(captures_in(args.captures))  # a folder given: the captures in it
    if args.scheduler is None and args.workers != 1 and len(captures) > 1:
        load_modules()  # before the freeze: the pool's workers are forked from here and share the modules
    # the modules' objects are never garbage: the collector need not walk them again per batch (nor, in a
    # forked worker, copy the pages it would touch)
    gc.freeze()
    if args.workers is not None and args.workers < 1:
        return usage_error("--workers must be at least 1")
    if args.batch_rows is not None and args.batch_rows < 1:
        return usage_error("--batch-rows must be at least 1")
    try:
        options = read_options(args)
    except ValueError as e:
        return usage_error(str(e))
    failed: list[tuple[str, str]] = []
    rows = 0

    with _progress(len(captures)) as (on_file, on_messages):
        def file_done(r: Any) -> None:
            nonlocal rows
            rows += r.rows
            if not r.ok:
                failed.append((r.path, r.error))
            elif args.verbose:
                print(f"godot-dissect: {r.path}: {r.rows} messages in {r.seconds:.2f} s "
                      f"({r.cpu_seconds:.2f} CPU s)", file=sys.stderr)
            on_file(r)

        try:
            results = export(captures, args.output, args.format, workers=args.workers,
                             scheduler=args.scheduler,
                             batch_rows=BATCH_ROWS if args.batch_rows is None else args.batch_rows,
                             read_options=options, on_file=file_done, on_messages=on_messages,
                             compression=args.compression)
        except (OSError, RuntimeError, ValueError) as e:
            return usage_error(str(e))
    for path, error in failed:
        print(f"godot-dissect: {error if path in error else f'{path}: {error}'}", file=sys.stderr)
    ok = sum(r.ok for r in results)
    print(f"{ok} of {len(results)} captures exported to {args.output} ({rows} messages)"
          + (f"; {len(failed)} failed" if failed else ""), file=sys.stderr)
    return 1 if failed else 0


@contextlib.contextmanager
def _progress(files: int) -> Iterator[tuple[Any, Any]]:
    """(on_file, on_messages) callbacks: a rich progress bar of files and messages on a terminal, drawn
    by the callbacks themselves (no refresh thread: the process pool may then fork from this process)."""
    if not sys.stderr.isatty():
        yield (lambda r: None), (lambda n: None)
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  transient=True, auto_refresh=False) as bar:
        file_task = bar.add_task("captures", total=files)
        msg_task = bar.add_task("messages", total=None)

        def advance(task: Any, n: int = 1) -> None:
            bar.advance(task, n)
            bar.refresh()

        yield (lambda r: advance(file_task)), (lambda n: advance(msg_task, n))


def run_query(args: argparse.Namespace) -> int:
    import duckdb

    from ..dataset.frames import to_duckdb
    from ..pcap.packets import CaptureError

    con = duckdb.connect()
    try:
        rel = to_duckdb(args.sources, con, **read_options(args))
        rel.create_view("messages")
        # run once, its rows fetched QUERY_FETCH_ROWS at a time: a result as big as the dataset is printed
        # (csv, json) or counted (table) without being held; DuckDB raises most errors only while fetching
        cursor = con.execute(args.sql)
        if cursor is None:  # DuckDB's answer to SQL of no statement (blank, a comment, ";")
            return usage_error(f"no SQL statement in {args.sql!r}")
        if cursor.description is None:  # a statement without a result
            return 0
        columns = [d[0] for d in cursor.description]
        chunks = iter(lambda: cursor.fetchmany(QUERY_FETCH_ROWS), [])
        _print_rows(args.format, columns, chunks)
    except (duckdb.Error, CaptureError, OSError, ValueError) as e:
        return usage_error(str(e))
    return 0


def _print_rows(fmt: str, columns: list[str], chunks: Iterator[list[tuple]]) -> None:
    if fmt == "csv":
        import csv

        w = csv.writer(sys.stdout)
        w.writerow(columns)
        for rows in chunks:
            w.writerows(rows)
    elif fmt == "json":  # what json.dump(rows, indent=1) writes, a row at a time
        sep = "[\n"
        for rows in chunks:
            for r in rows:
                obj = json.dumps(dict(zip(columns, r, strict=True)), ensure_ascii=False, default=str, indent=1)
                sys.stdout.write(sep + " " + obj.replace("\n", "\n "))  # JSON strings hold no raw newline
                sep = ",\n"
        sys.stdout.write("[]\n" if sep == "[\n" else "\n]\n")
    else:
        from rich.console import Console
        from rich.table import Table

        from ..spec.stats import MAX_DISPLAY_ROWS

        t = Table(*columns)
        hidden = 0
        for rows in chunks:
            for r in rows:
                if t.row_count < MAX_DISPLAY_ROWS:
                    t.add_row(*("" if v is None else str(v) for v in r))
                else:
                    hidden += 1
        console = Console(width=None if sys.stdout.isatty() else PIPE_WIDTH)
        console.print(t)
        if hidden:
            console.print(f"{hidden} more rows not drawn (MAX_DISPLAY_ROWS): --format csv or json prints every row")
