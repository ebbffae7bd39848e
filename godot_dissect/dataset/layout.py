"""Where an exported dataset keeps its files: ``OUT/capture=NAME/part-0.FORMAT`` (Hive style, so
DuckDB, pandas/pyarrow, Polars and Spark read the folder as one table with a ``capture`` column),
written under a temporary name and renamed."""

from __future__ import annotations

import contextlib
import os
from urllib.parse import quote, unquote

FORMATS = ("parquet", "csv", "jsonl")
#: Parquet compression codecs ``export --compression`` offers, and its default: snappy (pyarrow's own default,
#: read everywhere) encodes the load capture in two thirds of zstd's CPU time for a file twice as big (6.8 MB
#: against 3.4 MB of a 24 MB capture); zstd when size matters more than time
PARQUET_COMPRESSIONS = ("snappy", "zstd", "lz4", "gzip", "none")
PARQUET_COMPRESSION = "snappy"
PARTITION = "capture"
PART = "part-0"
#: temporary files start with a dot (readers skip them) and carry this marker
TMP_MARK = ".tmp-"


#: ASCII characters a partition's name keeps as they are; the other ASCII ones are percent-escaped
_SAFE = " ,;+@()[]{}!~-_."


def partition_dir(out: str, capture: str) -> str:
    # ASCII percent-escaped as Hive and pyarrow do, so "/", "=" and "%" in a name cannot break the layout;
    # other characters as they are (UTF-8): escaped, one é took 6 bytes of the file system's 255 per name,
    # and a capture named with 43 of them could not be exported
    name = "".join(c if ord(c) > 0x7F else quote(c, safe=_SAFE) for c in capture_name(capture))
    return os.path.join(out, f"{PARTITION}={name}")


def capture_name(name: str) -> str:
    """A file name as the dataset's ``capture`` value: bytes of the name that are not UTF-8 (the surrogates
    os.fsdecode gives them) written as ``\\xNN``: a partition must be UTF-8 for pyarrow and DuckDB."""
    try:
        raw = name.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no file name has (a name given by a caller)
        raw = name.encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "backslashreplace")


def capture_of(partition: str) -> str:
    return unquote(os.path.basename(partition).split("=", 1)[1])


def part_path(out: str, capture: str, fmt: str) -> str:
    return os.path.join(partition_dir(out, capture), f"{PART}.{fmt}")


def temp_path(final: str) -> str:
    """A name beside ``final`` no reader picks up and no other writer (a retried task) shares."""
    head, tail = os.path.split(final)
    return os.path.join(head, f".{tail}{TMP_MARK}{os.getpid()}-{os.urandom(4).hex()}")


def is_temp(name: str) -> bool:
    return name.startswith(".") and TMP_MARK in name


def is_dataset(path: str | os.PathLike) -> bool:
    return os.path.isdir(path)


def dataset_glob(out: str | os.PathLike) -> str:
    return os.path.join(os.fspath(out), f"{PARTITION}=*", "*.parquet")


def part_format(path: str | os.PathLike) -> str | None:
    """The format of a dataset part file by its name (None: not a part, e.g. a capture)."""
    ext = os.path.splitext(os.fspath(path))[1][1:].lower()
    return ext if ext in FORMATS else None


def dataset_parts(out: str | os.PathLike) -> dict[str, list[str]]:
    """The part files of a dataset folder by format (a folder may hold several: ``export`` run with
    ``--format csv`` into it, or folders of other exports copied in), temporary files left out."""
    parts: dict[str, list[str]] = {fmt: [] for fmt in FORMATS}
    out = os.fspath(out)
    for d in sorted(os.listdir(out)):
        folder = os.path.join(out, d)
        if not d.startswith(f"{PARTITION}=") or not os.path.isdir(folder):
            continue
        for n in sorted(os.listdir(folder)):
            fmt = part_format(n)
            path = os.path.join(folder, n)
            # a regular file (or a link to one): opening a FIFO or a device named like a part would block
            if fmt is not None and not is_temp(n) and os.path.isfile(path):
                parts[fmt].append(path)
    return parts


def other_parts(out: str, capture: str, fmt: str) -> list[str]:
    """Parts of ``capture`` in formats other than ``fmt``, and in any format under the name an earlier export
    gave its partition (every non-ASCII character percent-escaped): a new export of it replaces them."""
    parts = [p for f in FORMATS if f != fmt and os.path.exists(p := part_path(out, capture, f))]
    legacy = os.path.join(out, f"{PARTITION}={quote(capture_name(capture), safe=_SAFE)}")
    if legacy != partition_dir(out, capture):
        parts += [p for f in FORMATS if os.path.exists(p := os.path.join(legacy, f"{PART}.{f}"))]
    return parts


def remove_temps(out: str, captures: list[str]) -> list[str]:
    """Delete what writers that died (a killed Dask worker) left under these captures' partitions."""
    removed = []
    for capture in captures:
        d = partition_dir(out, capture)
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for n in names:
            if is_temp(n):
                with contextlib.suppress(OSError):
                    os.remove(os.path.join(d, n))
                    removed.append(os.path.join(d, n))
        with contextlib.suppress(OSError):
            os.rmdir(d)  # only when empty: a capture that never finished leaves no folder
    return removed
