"""Convert one capture into its part of a dataset: the unit of work every engine (in process, a
process pool, a Dask cluster) runs. A capture is never split: Godot conversations are stateful
(TCP streams, ENet fragments, path caches)."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from .arrow import record_batches
from .layout import other_parts, part_path, temp_path
from .schema import BATCH_ROWS, FILE_SCHEMA


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
            read_options: dict[str, Any] | None = None,
            on_batch: Callable[[int], None] | None = None) -> FileResult:
    """Write ``path``'s messages to ``OUT/capture=NAME/part-0.FMT`` (replacing the capture's part in
    any format) and return the outcome; never raises for a bad capture (the error is in the result)
    and leaves no partial file behind."""
    t0, cpu0 = time.perf_counter(), time.process_time()
    name = capture if capture is not None else os.path.basename(path)
    final = part_path(out, name, fmt)
    folder = os.path.dirname(final)
    made_folder = not os.path.isdir(folder)
    tmp = temp_path(final)
    try:
        os.makedirs(folder, exist_ok=True)
        rows = _write(path, tmp, fmt, batch_rows, read_options or {}, on_batch)
        os.replace(tmp, final)
        for old in other_parts(out, name, fmt):  # this capture's part from an export in another format
            os.remove(old)
    except Exception as e:  # noqa: BLE001 - reported per file; the other files go on
        _discard(tmp, folder if made_folder else None)
        return FileResult(path, name, error=_reason(e), seconds=time.perf_counter() - t0,
                          cpu_seconds=time.process_time() - cpu0)
    return FileResult(path, name, rows, final, seconds=time.perf_counter() - t0, cpu_seconds=time.process_time() - cpu0)


def _write(path: str, tmp: str, fmt: str, batch_rows: int, read_options: dict[str, Any],
           on_batch: Callable[[int], None] | None) -> int:
    from ..pcap.reader import read_pcap

    records = read_pcap(path, **read_options)
    rows = 0
    if fmt == "jsonl":  # the project's JSON lines, as `read --format jsonl` writes them
        with open(tmp, "w", encoding="utf-8") as f:
            lines: list[str] = []
            for rec in records:
                lines.append(rec.to_jsonl())
                if len(lines) >= batch_rows:
                    f.write("\n".join(lines) + "\n")
                    rows += len(lines)
                    _tell(on_batch, len(lines))
                    lines.clear()
            if lines:
                f.write("\n".join(lines) + "\n")
                rows += len(lines)
                _tell(on_batch, len(lines))
        return rows
    batches = record_batches(records, batch_rows=batch_rows, schema=FILE_SCHEMA)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        # statistics (min/max per row group) where a filter can use them; not of texts and values
        stats = [f.name for f in FILE_SCHEMA if f.type != pa.large_string()]
        writer = pq.ParquetWriter(tmp, FILE_SCHEMA, compression="zstd", write_statistics=stats)
    elif fmt == "csv":
        import pyarrow.csv as pcsv

        writer = pcsv.CSVWriter(tmp, FILE_SCHEMA)
    else:
        raise ValueError(f"unknown format {fmt!r}")
    with writer, ThreadPoolExecutor(1, thread_name_prefix="godot-dissect-writer") as background:
        # the writer encodes and compresses a batch (without the GIL) while the next one is read
        pending: Future | None = None
        for b in batches:
            if pending is not None:
                pending.result()
            pending = background.submit(writer.write_batch, b)
            rows += b.num_rows
            _tell(on_batch, b.num_rows)
        if pending is not None:
            pending.result()
    return rows


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
