"""Convert one capture into its part of a dataset: the unit of work every engine (in process, a
process pool, a Dask cluster) runs. A capture is never split: Godot conversations are stateful
(TCP streams, ENet fragments, path caches)."""

from __future__ import annotations

import contextlib
import gc
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from .arrow import capture_batches
from .layout import PARQUET_COMPRESSION, other_parts, part_path, temp_path
from .schema import BATCH_ROWS, BATCH_TEXT_BYTES, FILE_SCHEMA

#: allocations between two young-generation collections while a capture converts (Python's default: 700). The
#: conversion makes no reference cycles, yet at the default the collector walks each batch's young rows and values
#: some 120 times per 30,000 messages (4% of an export's CPU); garbage in cycles, were there any, is still collected
GC_ALLOCATIONS = 50_000
#: columns whose values are (nearly) all different row by row: Parquet dictionary encoding only costs there (without
#: it the load capture's encoding takes ~5 ms less CPU of ~55 and both load captures' files get smaller)
ROW_UNIQUE_COLUMNS = ("frame", "time", "offset", "wire_bytes")


@dataclass(frozen=True)
class FileResult:
    """What converting one capture gave: its part file and row count, or why it failed."""

    path: str  # the capture as given
    capture: str  # its name in the dataset
    rows: int = 0
    output: str | None = None
    error: str | None = None
    seconds: float = 0.0  # wall-clock time of the conversion, where it ran
    cpu_seconds: float = 0.0  # CPU time of its process meanwhile, the writer thread's too (contention does not count)

    @property
    def ok(self) -> bool:
        return self.error is None


def convert(path: str, out: str, fmt: str = "parquet", *, capture: str | None = None, batch_rows: int = BATCH_ROWS,
            read_options: dict[str, Any] | None = None, on_batch: Callable[[int], None] | None = None,
            compression: str = PARQUET_COMPRESSION) -> FileResult:
    """Write ``path``'s messages to ``OUT/capture=NAME/part-0.FMT`` (replacing the capture's part in
    any format; ``compression``: the Parquet codec) and return the outcome; never raises for a bad
    capture (the error is in the result) and leaves no partial file behind."""
    t0, cpu0 = time.perf_counter(), time.process_time()
    name = capture if capture is not None else os.path.basename(path)
    final = part_path(out, name, fmt)
    folder = os.path.dirname(final)
    made_folder = not os.path.isdir(folder)
    tmp = temp_path(final)
    try:
        os.makedirs(folder, exist_ok=True)
        with _fewer_collections():
            rows = _write(path, tmp, fmt, batch_rows, read_options or {}, on_batch, compression)
        os.replace(tmp, final)
        for old in other_parts(out, name, fmt):  # this capture's part from an export in another format
            os.remove(old)
            if os.path.dirname(old) != folder:  # an earlier export's partition name: gone when empty
                with contextlib.suppress(OSError):
                    os.rmdir(os.path.dirname(old))
    except Exception as e:  # noqa: BLE001 - reported per file; the other files go on
        _discard(tmp, folder if made_folder else None)
        return FileResult(path, name, error=_reason(e), seconds=time.perf_counter() - t0,
                          cpu_seconds=time.process_time() - cpu0)
    return FileResult(path, name, rows, final, seconds=time.perf_counter() - t0, cpu_seconds=time.process_time() - cpu0)


def _write(path: str, tmp: str, fmt: str, batch_rows: int, read_options: dict[str, Any],
           on_batch: Callable[[int], None] | None, compression: str) -> int:
    rows = 0
    if fmt == "jsonl":  # the project's JSON lines, as `read --format jsonl` writes them
        from ..pcap.reader import read_pcap

        if batch_rows < 1:
            raise ValueError("batch_rows must be at least 1")
        records = read_pcap(path, **read_options)
        with open(tmp, "w", encoding="utf-8") as f:
            lines: list[str] = []
            held = 0  # characters in lines: cut at BATCH_TEXT_BYTES as the Arrow batches are
            for rec in records:
                line = rec.to_jsonl()
                lines.append(line)
                held += len(line)
                if len(lines) >= batch_rows or held >= BATCH_TEXT_BYTES:
                    f.write("\n".join(lines) + "\n")
                    rows += len(lines)
                    _tell(on_batch, len(lines))
                    lines.clear()
                    held = 0
            if lines:
                f.write("\n".join(lines) + "\n")
                rows += len(lines)
                _tell(on_batch, len(lines))
        return rows
    batches = capture_batches(path, batch_rows=batch_rows, schema=FILE_SCHEMA, **read_options)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        # statistics (min/max per row group) where a filter can use them; not of texts and values
        stats = [f.name for f in FILE_SCHEMA if f.type != pa.large_string()]
        dictionary = [f.name for f in FILE_SCHEMA if f.name not in ROW_UNIQUE_COLUMNS]
        writer = pq.ParquetWriter(tmp, FILE_SCHEMA, compression=compression, write_statistics=stats,
                                  use_dictionary=dictionary)
    elif fmt == "csv":
        import pyarrow.csv as pcsv

        writer = pcsv.CSVWriter(tmp, FILE_SCHEMA)
    else:
        raise ValueError(f"unknown format {fmt!r}")
    background = _Background()
    with writer:
        try:
            for b in batches:  # the writer encodes and compresses a batch (without the GIL) while the next is read
                background.run(writer.write_batch, b)
                rows += b.num_rows
                _tell(on_batch, b.num_rows)
        finally:
            background.join()  # a failed read ends the conversion once the writer is done with its batch
        background.wait()
    return rows


class _Background:
    """One call at a time in a thread of its own (a plain thread: concurrent.futures costs start-up)."""

    def __init__(self) -> None:
        self.thread: threading.Thread | None = None
        self.error: BaseException | None = None

    def run(self, fn: Callable[[Any], Any], arg: Any) -> None:
        """Wait for the previous call (raising its error), then start ``fn(arg)``."""
        self.wait()

        def call() -> None:
            try:
                fn(arg)
            except BaseException as e:  # noqa: BLE001 - raised again in the caller's thread by wait()
                self.error = e

        self.thread = threading.Thread(target=call, name="godot-dissect-writer", daemon=True)
        self.thread.start()

    def join(self) -> None:
        if self.thread is not None:
            self.thread.join()
            self.thread = None

    def wait(self) -> None:
        """Wait for the call running, and raise its error."""
        self.join()
        if self.error is not None:
            e, self.error = self.error, None
            raise e


_gc_lock = threading.Lock()
_gc_saved: list[tuple[int, ...]] = []  # the thresholds to restore, while conversions run (Dask runs some at once)


@contextlib.contextmanager
def _fewer_collections() -> Iterator[None]:
    """Young-generation collections every GC_ALLOCATIONS allocations while conversions run in this process."""
    with _gc_lock:
        _gc_saved.append(gc.get_threshold())
        first = _gc_saved[0]
        gc.set_threshold(max(first[0], GC_ALLOCATIONS), *first[1:])
    try:
        yield
    finally:
        with _gc_lock:
            first = _gc_saved[0]
            _gc_saved.pop()
            if not _gc_saved:
                gc.set_threshold(*first)


def _tell(on_batch: Callable[[int], None] | None, n: int) -> None:
    if on_batch is not None:
        on_batch(n)


def _discard(tmp: str, folder: str | None) -> None:
    with contextlib.suppress(OSError):
        os.remove(tmp)
    if folder is not None:
        with contextlib.suppress(OSError):  # only when empty
            os.rmdir(folder)


def _reason(e: BaseException) -> str:
    text = str(e) or type(e).__name__
    return text if isinstance(e, OSError) or "CaptureError" in type(e).__name__ else f"{type(e).__name__}: {text}"
