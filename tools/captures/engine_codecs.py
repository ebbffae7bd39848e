"""The codecs a Godot 3.2.3 NetworkedMultiplayerENet really uses, for checking compressed captures.

Nothing here comes from godot_dissect: the driver must not check our decompressors with themselves.

* COMPRESS_RANGE_CODER is ENet's own ``enet_range_coder_compress/decompress``.  Debian's
  godot3-server links the system ``libenet.so.7`` (``ldd $(which godot3-server)``), so calling that
  library through ctypes runs the very code the engine ran.
* COMPRESS_FASTLZ / COMPRESS_ZLIB / COMPRESS_ZSTD go through the engine's ``Compression`` class,
  which GDScript reaches as ``PoolByteArray.compress/decompress`` (tools/captures/godot3_mp/codec.gd).

Every job is a datagram body.  A compressed one is decompressed with ENet's output limit and
compressed again (the compressors are deterministic, so that must give the wire bytes back); an
uncompressed one is compressed to see that ENet was right to send it as it was (the compressed form
is kept only when it is shorter).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import struct
from dataclasses import dataclass
from typing import Any

from common import CaptureError

MAX_MTU = 4096  # ENET_PROTOCOL_MAXIMUM_MTU: ENet decompresses into packetData[1] of this size


@dataclass
class CodecJob:
    mode: str  # the NetworkedMultiplayerENet constant, e.g. "COMPRESS_ZLIB"
    body: bytes  # the datagram after its ENet header
    header_size: int  # 2, or 4 with sentTime
    compressed: bool  # the header's COMPRESSED bit
    # results
    plain: bytes | None = None  # compressed: what the engine's decompressor made of it (None: failed)
    recompressed_equal: bool = False  # compressed: compress(plain) == body
    compressed_size: int = 0  # uncompressed: the size the engine's compressor gives it


class _EnetBuffer(ctypes.Structure):  # unix.h: typedef struct { void * data; size_t dataLength; } ENetBuffer
    _fields_ = [("data", ctypes.c_void_p), ("dataLength", ctypes.c_size_t)]


class LibEnetRangeCoder:
    """``enet_range_coder_*`` of the system libenet (the library godot3-server is linked with)."""

    def __init__(self) -> None:
        name = ctypes.util.find_library("enet") or "libenet.so.7"
        try:
            lib = ctypes.CDLL(name)
        except OSError as e:
            raise CaptureError(f"libenet not found ({e}); apt-get install -y libenet7") from None
        lib.enet_range_coder_create.restype = ctypes.c_void_p
        lib.enet_range_coder_destroy.argtypes = [ctypes.c_void_p]
        lib.enet_range_coder_compress.restype = ctypes.c_size_t
        lib.enet_range_coder_compress.argtypes = [ctypes.c_void_p, ctypes.POINTER(_EnetBuffer), ctypes.c_size_t,
                                                  ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t]
        lib.enet_range_coder_decompress.restype = ctypes.c_size_t
        lib.enet_range_coder_decompress.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                                                    ctypes.c_void_p, ctypes.c_size_t]
        self.lib = lib
        self.ctx = lib.enet_range_coder_create()

    def close(self) -> None:
        self.lib.enet_range_coder_destroy(self.ctx)

    def decompress(self, data: bytes, limit: int) -> bytes | None:
        out = ctypes.create_string_buffer(limit)
        n = self.lib.enet_range_coder_decompress(self.ctx, data, len(data), out, limit)
        return out.raw[:n] if n else None  # 0: ENet drops the datagram

    def compress(self, data: bytes, limit: int) -> bytes:
        """At most ``limit`` bytes, as enet_protocol_send_outgoing_commands asks; b"" when it does not fit."""
        src = ctypes.create_string_buffer(data, len(data))
        buf = _EnetBuffer(ctypes.cast(src, ctypes.c_void_p), len(data))
        out = ctypes.create_string_buffer(max(limit, 1))
        n = self.lib.enet_range_coder_compress(self.ctx, ctypes.byref(buf), 1, len(data), out, limit)
        return out.raw[:n]


def run_range_coder(jobs: list[CodecJob]) -> None:
    rc = LibEnetRangeCoder()
    try:
        for j in jobs:
            if j.compressed:
                j.plain = rc.decompress(j.body, MAX_MTU - j.header_size)
                # ENet compresses with outLimit = the uncompressed size; more room here so that a
                # wrong decompression shows as a difference, not as "does not fit"
                j.recompressed_equal = j.plain is not None and rc.compress(j.plain, MAX_MTU) == j.body
            else:
                # ENet asks for at most len(body) bytes and keeps the result only when shorter; the
                # size without that limit (0 = the coder gave up even with a whole MTU of room)
                j.compressed_size = len(rc.compress(j.body, MAX_MTU))
    finally:
        rc.close()


def run_engine(ws: Any, jobs: list[CodecJob], timeout: float = 120) -> None:
    """FastLZ / zlib / zstd jobs through a godot3-server running codec.gd in ``ws`` (a make_captures
    Workspace with the godot3_mp project)."""
    import make_captures as mc

    if not jobs:
        return
    blob = bytearray(struct.pack("<I", len(jobs)))
    for j in jobs:
        name = j.mode.encode()
        blob += struct.pack("<I", len(name)) + name
        blob += struct.pack("<III", 0 if j.compressed else 1, MAX_MTU - j.header_size, len(j.body)) + j.body
    (ws.project / "codec_jobs.bin").write_bytes(bytes(blob))
    p = ws.script("codec", "codec.gd")
    p.wait(timeout)
    mc.check_engine(p)
    seen = set()
    for f in mc.cap_lines(p.stderr()):
        if f[0] != "CODEC":
            continue
        j = jobs[int(f[1])]
        seen.add(int(f[1]))
        if f[2] == "0":
            j.plain = None if f[3] == "-" else bytes.fromhex(f[3])
            j.recompressed_equal = f[4] == "1"
        else:
            j.compressed_size = int(f[4])
    if len(seen) != len(jobs):
        raise CaptureError(f"codec.gd answered {len(seen)} of {len(jobs)} jobs")


def run_jobs(ws: Any, jobs: list[CodecJob]) -> None:
    run_range_coder([j for j in jobs if j.mode == "COMPRESS_RANGE_CODER"])
    run_engine(ws, [j for j in jobs if j.mode != "COMPRESS_RANGE_CODER"])
