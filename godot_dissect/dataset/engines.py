"""Run :func:`~.export.convert` over many captures: in this process, in a pool of processes on this
machine, or as tasks of a Dask distributed cluster. One capture is one task whatever the engine,
so the rows are the same."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .export import FileResult, convert
from .inputs import FolderProblem, captures_in
from .layout import FORMATS, PARQUET_COMPRESSION, capture_name, remove_temps
from .schema import BATCH_ROWS

if TYPE_CHECKING:
    import multiprocessing.context

OnFile = Callable[[FileResult], None]
OnMessages = Callable[[int], None]


def export(paths: Sequence[str | FolderProblem], out: str, fmt: str = "parquet", *, workers: int | None = None,
           scheduler: str | None = None, batch_rows: int = BATCH_ROWS, read_options: dict[str, Any] | None = None,
           on_file: OnFile | None = None, on_messages: OnMessages | None = None,
           compression: str = PARQUET_COMPRESSION) -> list[FileResult]:
    """Convert every capture in ``paths`` to ``out`` (a folder: the captures in it and its subfolders, by
    name); one result per capture, in the order given.
    ``scheduler`` (``tcp://HOST:8786``) sends the tasks to a Dask cluster; else ``workers``
    processes (default: this machine's cores; 1: in this process)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r} (one of {', '.join(FORMATS)})")
    os.makedirs(out, exist_ok=True)
    out = os.path.abspath(out)  # Dask workers and pool processes may not share our working directory
    tasks, results = _named(paths)
    kw = {"fmt": fmt, "batch_rows": batch_rows, "read_options": read_options or {}, "compression": compression}
    in_process = scheduler is None and (workers == 1 or len(tasks) <= 1)

    def done(i: int, r: FileResult) -> None:
        results[i] = r
        if on_file is not None:
            on_file(r)
        if on_messages is not None and not in_process:
            on_messages(r.rows)  # a whole file's messages at once: other processes do not report batches

    for r in results:
        if r is not None and on_file is not None:
            on_file(r)
    try:
        if scheduler is not None:
            _run_dask(scheduler, _largest_first(tasks), out, kw, done)
        elif in_process:
            for i, path, name in tasks:  # in the order given (the progress of a single capture is streamed)
                done(i, convert(path, out, capture=name, on_batch=on_messages, **kw))
        else:
            _run_pool(workers or os.cpu_count() or 1, _largest_first(tasks), out, kw, done)
    finally:  # also on Ctrl-C
        remove_temps(out, [name for _, _, name in tasks])  # left by a process that died mid-file
    return [r for r in results if r is not None]


def _largest_first(tasks: list[tuple[int, str, str]]) -> list[tuple[int, str, str]]:
    """The tasks by decreasing file size: the big captures start first, so a small one, not a big one,
    is the last to run while the other workers idle (the results keep the order given)."""
    def size(task: tuple[int, str, str]) -> int:
        try:
            return os.path.getsize(task[1])
        except OSError:
            return 0  # it fails fast, and reports why
    return sorted(tasks, key=size, reverse=True)


def _named(paths: Sequence[str | FolderProblem]) -> tuple[list[tuple[int, str, str]], list[FileResult | None]]:
    """(index, path, capture name) per task, a folder given standing for the captures in it; a second
    capture with the same file name would overwrite the first one's part, so it fails instead."""
    tasks: list[tuple[int, str, str]] = []
    results: list[FileResult | None] = []
    seen: dict[str, str] = {}
    for p in captures_in(paths):
        i = len(results)
        if isinstance(p, FolderProblem):
            results.append(FileResult(p.folder, os.path.basename(os.path.normpath(p.folder)), error=p.reason))
            continue
        name = capture_name(os.path.basename(os.path.normpath(p)))
        if name in seen:
            results.append(FileResult(p, name, error=f"same file name as {seen[name]}: rename one of them"))
            continue
        seen[name] = p
        tasks.append((i, os.path.abspath(p), name))
        results.append(None)
    return tasks, results


def load_modules() -> None:
    """Import what :func:`~.export.convert` imports on its first call (before workers are forked)."""
    import pyarrow.csv  # noqa: F401
    import pyarrow.parquet  # noqa: F401

    from ..pcap import reader  # noqa: F401


def _pool_context() -> multiprocessing.context.BaseContext:
    """Fork the workers from this process where that is safe (Linux, and no other Python thread, such
    as a progress bar's, whose locks a child would inherit): they start at once with what is loaded
    here. Else from a fork server, which has to load it all first (half a second)."""
    import multiprocessing  # here: a single capture converted in this process needs no pool (a 10 ms import)

    if sys.platform == "linux" and threading.active_count() == 1:
        load_modules()
        return multiprocessing.get_context("fork")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["godot_dissect.dataset.worker"])
    return ctx


def _run_pool(workers: int, tasks: list[tuple[int, str, str]], out: str, kw: dict[str, Any],
              done: Callable[[int, FileResult], None]) -> None:
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(max_workers=min(workers, len(tasks)), mp_context=_pool_context()) as pool:
        futures = {pool.submit(convert, path, out, capture=name, **kw): (i, path, name) for i, path, name in tasks}
        for f in as_completed(futures):
            i, path, name = futures[f]
            try:
                r = f.result()
            except Exception as e:  # noqa: BLE001 - the worker process died (killed, out of memory)
                r = FileResult(path, name, error=f"worker process failed: {type(e).__name__}: {e}")
            done(i, r)


def _run_dask(scheduler: str, tasks: list[tuple[int, str, str]], out: str, kw: dict[str, Any],
              done: Callable[[int, FileResult], None]) -> None:
    try:
        from distributed import Client
        from distributed import as_completed as dask_completed
    except ImportError as e:
        raise RuntimeError("--scheduler needs Dask distributed: pip install 'godot-dissect[cluster]'") from e
    with Client(scheduler) as client:
        futures = {}
        for i, path, name in tasks:
            # pure=False: a new key per run; a worker that dies mid-file has its task run again elsewhere,
            # and the part is only renamed into place when complete, so rows never double
            f = client.submit(convert, path, out, capture=name, pure=False, **kw)
            futures[f] = (i, path, name)
        for f in dask_completed(list(futures)):
            i, path, name = futures[f]
            try:
                r = f.result()
            except Exception as e:  # noqa: BLE001 - e.g. KilledWorker: the task killed too many workers
                r = FileResult(path, name, error=f"Dask task failed: {type(e).__name__}: {e}")
            done(i, r)
