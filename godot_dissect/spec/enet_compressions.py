"""The codecs Godot can install as ENet's compressor (part of ``spec.enet``, which re-exports them: kept apart so
``read``'s ``--enet-compression`` choices load without the ENet command tables; start-up time)."""

from __future__ import annotations

from .row import row


@row
class Compression:
    """A codec Godot can install as the ENet compressor; there is no in-band indication which."""

    name: str
    godot_value: int  # NetworkedMultiplayerENet.CompressionMode (3.x) = ENetConnection.CompressionMode (4.x)
    meaning: str


COMPRESSIONS = (
    Compression("none", 0, "no compressor (the default in both Godot 3.x and 4.x)"),
    Compression("range_coder", 1, "ENet's own adaptive order-2 PPM range coder (enet_range_coder_*)"),
    Compression("fastlz", 2, "FastLZ (Compression::MODE_FASTLZ); inputs under 16 bytes are zero-padded to 16"),
    Compression("zlib", 3, "zlib stream, window 15 (Compression::MODE_DEFLATE)"),
    Compression("zstd", 4, "Zstandard frame (Compression::MODE_ZSTD)"),
)
COMPRESSIONS_BY_NAME = {c.name: c for c in COMPRESSIONS}
