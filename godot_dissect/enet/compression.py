"""The codecs Godot can install as ENet's compressor (``spec.enet.COMPRESSIONS``).

Nothing on the wire says which one a host uses, so callers choose. Output is bounded by the
caller's limit (ENet decompresses into an MTU-sized buffer and drops the datagram when it does
not fit); a decoding failure is a ``CompressionError`` with an offset into the compressed bytes.
"""

from __future__ import annotations

import zlib

from ..spec.enet import COMPRESSIONS_BY_NAME
from . import fastlz, rangecoder


class CompressionError(ValueError):
    def __init__(self, offset: int, reason: str) -> None:
        self.offset, self.reason = offset, reason
        super().__init__(f"offset {offset}: {reason}")


def _check_mode(mode: str) -> None:
    if mode not in COMPRESSIONS_BY_NAME:
        raise ValueError(f"unknown ENet compression {mode!r}; choose one of {', '.join(COMPRESSIONS_BY_NAME)}")


def decompress(data: bytes, mode: str, limit: int) -> bytes:
    """Decode one compressed datagram body with ``mode``; at most ``limit`` bytes out."""
    _check_mode(mode)
    try:
        if mode == "range_coder":
            out = rangecoder.decompress(data, limit)
        elif mode == "fastlz":
            out = fastlz.decompress(data, limit)
        elif mode == "zlib":
            out = _inflate(data, limit)
        elif mode == "zstd":
            out = _zstd(data, limit)
        else:
            raise CompressionError(0, f"{mode} is not a codec")
    except (rangecoder.RangeCoderError, fastlz.FastLZError) as e:
        raise CompressionError(e.offset, e.reason) from None
    if not out:
        raise CompressionError(0, "decodes to nothing (ENet drops the datagram)")
    return out


def compress(data: bytes, mode: str) -> bytes:
    """Encode a datagram body the way the host's compressor would (range coder and zlib)."""
    _check_mode(mode)
    if mode == "range_coder":
        return rangecoder.compress(data)
    if mode == "zlib":
        return zlib.compress(data)
    raise ValueError(f"no {mode} encoder here (decoding only)")


def _inflate(data: bytes, limit: int) -> bytes:
    d = zlib.decompressobj()
    try:
        out = d.decompress(data, limit)
    except zlib.error as e:
        raise CompressionError(0, f"not a zlib stream ({e})") from None
    if d.unconsumed_tail:
        raise CompressionError(len(data) - len(d.unconsumed_tail), f"inflates to more than {limit} bytes")
    if not d.eof:
        raise CompressionError(len(data), "zlib stream ends early")
    return out


def _zstd(data: bytes, limit: int) -> bytes:
    try:
        import zstandard  # optional: not a dependency of the project
    except ImportError:
        raise CompressionError(0, "zstd decoding needs the 'zstandard' package") from None
    try:
        # a frame header's content size is what decompress allocates (2^40: MemoryError): Godot decompresses
        # into its MTU-sized buffer, so a frame declaring more fails there (ZSTD_decompressDCtx: dstSize_tooSmall)
        declared = zstandard.frame_content_size(data)
        if declared > limit:
            raise CompressionError(0, f"zstd frame declares {declared} bytes, more than {limit}")
        return zstandard.ZstdDecompressor().decompress(data, max_output_size=limit)
    except zstandard.ZstdError as e:
        raise CompressionError(0, f"not a zstd frame ({e})") from None
