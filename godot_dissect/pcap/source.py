"""Packet source, the reader's first stage: a capture (a path, ``"-"`` for standard input, or a
readable binary file object; pcap or pcapng, gzip-compressed too) -> (timestamp, frame bytes,
original length, link type) of every packet, in file order, read as a stream: nothing is seeked, and only
the block being read is held, so a pipe (``tcpdump -w - | godot-dissect read -``) works like a file.
"""

from __future__ import annotations

import gzip
import os
import struct
import sys
from collections.abc import Callable, Iterator
from typing import BinaryIO, Union

from . import pcapfile, pcapng

#: what ``read_pcap`` accepts as a capture
Source = Union[str, "os.PathLike[str]", BinaryIO]
_GZIP = b"\x1f\x8b"
#: bytes a capture needs at least to tell its format (pcapng's smallest section header is 28)
_MAGIC_SIZE = 4
Packets = Iterator[tuple[float, bytes, int, int]]


class CaptureError(Exception):
    """The file is not a readable pcap/pcapng capture."""


class _Peeked:
    """A stream with its first bytes read already put back in front (``read`` only)."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self.head, self.rest = head, rest

    def read(self, n: int = -1) -> bytes:
        if not self.head:
            return self.rest.read(n)
        if n < 0:
            out, self.head = self.head + self.rest.read(), b""
            return out
        out, self.head = self.head[:n], self.head[n:]
        if len(out) < n:
            out += self.rest.read(n - len(out))
        return out


def describe(source: Source) -> str:
    """How errors name a source."""
    if isinstance(source, (str, os.PathLike)):
        return "standard input" if str(source) == "-" else os.fspath(source)
    return getattr(source, "name", None) or "capture stream"


def _open(source: Source) -> tuple[BinaryIO, bool]:
    """(binary stream, whether we opened it and must close it)."""
    if isinstance(source, (str, os.PathLike)):
        if str(source) == "-":
            return sys.stdin.buffer, False
        if os.path.isdir(source):
            raise CaptureError(f"{describe(source)}: is a directory, not a capture file")
        try:
            return open(source, "rb"), True  # noqa: SIM115 - closed by packets()
        except OSError as e:
            raise CaptureError(f"{describe(source)}: {e.strerror or e}") from None
    if not hasattr(source, "read"):
        raise TypeError(f"a capture is a path, '-' or a binary file object, not {type(source).__name__}")
    return source, False


def _head(f: BinaryIO) -> tuple[bytes, BinaryIO]:
    """The stream's first bytes, and the stream to read from its start (the same one when it can
    peek or seek: wrapping every read would cost more than parsing the packets)."""
    peek = getattr(f, "peek", None)
    if peek is not None:
        head = peek(_MAGIC_SIZE)[:_MAGIC_SIZE]
        if len(head) == _MAGIC_SIZE or not head:
            _check_binary(head)
            return head, f
    head = f.read(_MAGIC_SIZE)
    _check_binary(head)
    if getattr(f, "seekable", lambda: False)():
        f.seek(-len(head), 1)
        return head, f
    return head, _Peeked(head, f)  # type: ignore[return-value]


def _check_binary(head: bytes) -> None:
    if isinstance(head, str):
        raise TypeError("the capture stream must be opened in binary mode")


def open_packets(source: Source, cut: Callable[..., tuple] | None = None) -> tuple[int, Packets]:
    """The capture's link type (its first interface's) and its packets as (timestamp, frame bytes, original
    length on the wire, link type of the packet's interface). The header is read now (a CaptureError if it is
    no capture); packets as they are asked for.
    ``cut``: a pcapng file's runs of whole packet blocks may come as lists instead (``pcapng.read``)."""
    name = describe(source)
    f, owned = _open(source)
    try:
        head, stream = _head(f)
        if head[:2] == _GZIP:
            stream = gzip.GzipFile(fileobj=stream, mode="rb")  # type: ignore[assignment]
            head, stream = _head(stream)
        if len(head) < _MAGIC_SIZE:
            raise CaptureError(f"{name}: too short for a capture ({len(head)} bytes; a pcap or pcapng "
                               f"file starts with a header of at least 24 bytes)")
        if head == pcapng.MAGIC:
            link, pkts = pcapng.read(stream, original_length=True, cut=cut)
        else:
            link, pkts = pcapfile.read(stream)
    except (ValueError, EOFError, struct.error, OSError, gzip.BadGzipFile) as e:
        if owned:
            f.close()
        raise CaptureError(f"{name}: not a pcap or pcapng capture ({e})") from None
    except BaseException:
        if owned:
            f.close()
        raise
    return link, _guarded(name, pkts, f if owned else None)


def _guarded(name: str, pkts: Packets, owned: BinaryIO | None) -> Packets:
    frame = 0
    try:
        for pkt in pkts:
            frame += len(pkt) if type(pkt) is list else 1  # (a list: one entry per packet)
            yield pkt
    except (EOFError, struct.error, gzip.BadGzipFile, OSError) as e:
        raise CaptureError(f"{name}: capture ends in the middle of a record after frame {frame} ({e})") from None
    except ValueError as e:  # a block whose lengths make no sense
        raise CaptureError(f"{name}: damaged capture after frame {frame} ({e})") from None
    finally:
        if owned is not None:
            owned.close()
