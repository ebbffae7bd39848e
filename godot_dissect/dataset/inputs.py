"""Which files ``export`` converts when it is given a folder: a studio's folder of server captures
(dumpcap ring buffers, one file per match or per day, subfolders per server) is one argument."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

#: file name endings of the captures taken from a folder (what the reader opens: pcap, pcapng, gzip-compressed
#: too); other files beside them (logs, notes, an exported dataset) are not captures
CAPTURE_SUFFIXES = (".pcapng", ".pcap", ".cap", ".ntar", ".pcapng.gz", ".pcap.gz", ".cap.gz")


@dataclass(frozen=True)
class FolderProblem:
    """A folder given that yields no capture (none of its files is named like one), or a folder under it
    that cannot be listed (no permission, a path too long)."""

    folder: str
    reason: str


def captures_in(paths: Sequence[str | FolderProblem]) -> Iterator[str | FolderProblem]:
    """The paths given, in order, each folder replaced by the captures under it (sorted by path; hidden
    files and folders, FIFOs and devices skipped; symbolic links to folders not followed: a link loop
    cannot recurse); what this gave before passes through as it is."""
    for p in paths:
        if isinstance(p, FolderProblem) or not os.path.isdir(p):
            yield p  # a file, or a path that fails with its own reason when read
            continue
        found = 0
        errors: list[OSError] = []
        for folder, subfolders, files in os.walk(p, onerror=errors.append):
            subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
            for name in sorted(files):
                path = os.path.join(folder, name)
                # regular files only (or links to them): opening a FIFO or a device named like a capture would block
                if not name.startswith(".") and name.lower().endswith(CAPTURE_SUFFIXES) and os.path.isfile(path):
                    found += 1
                    yield path
        for e in errors:  # a subfolder that cannot be listed is reported too: its captures would be lost unsaid
            where = e.filename if isinstance(e.filename, str) else p
            yield FolderProblem(where, f"{where}: cannot list the folder: {e.strerror or e}")
        if not found and not errors:
            yield FolderProblem(p, f"{p}: no capture files in the folder (names ending {', '.join(CAPTURE_SUFFIXES)})")
