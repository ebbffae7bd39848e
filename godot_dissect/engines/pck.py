"""Minimal Godot 4 ``.pck`` writer (pack format v3) for the web-template oracle.

The web export template can only load a project from a pack file, so we build one by hand:

  header  "GDPC", u32 pack_format=3, u32 major, u32 minor, u32 patch, u32 flags=2 (PACK_REL_FILEBASE),
          u64 file_base, u64 dir_offset, 16 x u32 reserved; padded to 16 bytes (file_base = 0x70)
  files   data blobs, each padded to 16 bytes (offsets relative to file_base)
  dir     u32 count, per file: u32 len(path padded to 4 with NULs), path, u64 offset, u64 size,
          16-byte md5, u32 flags=0

``project.binary`` is "ECFG", u32 count, then per setting u32 key length, key bytes (no padding),
u32 value length and a Variant-encoded value.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable, Sequence

from ..codec import encode
from ..values import PackedStringArray

_ALIGN = 16

Setting = tuple[str, bytes]


def _pad4(b: bytes) -> bytes:
    return b + b"\0" * (-len(b) % 4)


# Project settings are Variants: written by our codec (one table), which the engine then reads
# at boot, so a codec bug here shows up as an oracle that does not start, never as a false pass.
def v_bool(value: bool) -> bytes:
    return encode(bool(value), "godot4")


def v_int(value: int) -> bytes:
    return encode(int(value), "godot4")


def v_string(value: str) -> bytes:
    return encode(str(value), "godot4")


def v_packed_strings(values: Sequence[str]) -> bytes:
    return encode(PackedStringArray(values), "godot4")


def project_binary(settings: Iterable[Setting]) -> bytes:
    items = list(settings)
    out = bytearray(b"ECFG" + struct.pack("<I", len(items)))
    for key, value in items:
        k = key.encode("utf-8")
        out += struct.pack("<I", len(k)) + k + struct.pack("<I", len(value)) + value
    return bytes(out)


def default_settings(main_scene: str, engine_version: tuple[int, int] = (4, 6)) -> list[Setting]:
    """Settings for a headless, silent run whose main scene is ``main_scene``."""
    return [
        ("application/config/name", v_string("godot-dissect-oracle")),
        ("application/config/features", v_packed_strings([f"{engine_version[0]}.{engine_version[1]}"])),
        ("application/run/main_scene", v_string(main_scene)),
        ("application/boot_splash/show_image", v_bool(False)),
        ("audio/driver/driver", v_string("Dummy")),
        ("rendering/renderer/rendering_method", v_string("gl_compatibility")),
        ("rendering/renderer/rendering_method.web", v_string("gl_compatibility")),
        ("debug/settings/stdout/print_fps", v_bool(False)),
        ("application/run/flush_stdout_on_print", v_bool(True)),
    ]


def build_pck(files: Iterable[tuple[str, bytes]], version: tuple[int, int, int] = (4, 6, 0)) -> bytes:
    """Return a pack containing ``files`` given as (path relative to res://, content)."""
    header_len = 4 + 4 * 5 + 8 + 8 + 16 * 4
    file_base = -(-header_len // _ALIGN) * _ALIGN
    blobs = bytearray()
    entries: list[tuple[str, int, int, bytes]] = []
    for path, data in files:
        entries.append((path, len(blobs), len(data), hashlib.md5(data).digest()))
        blobs += data
        blobs += b"\0" * (-len(blobs) % _ALIGN)
    directory = bytearray(struct.pack("<I", len(entries)))
    for path, offset, size, md5 in entries:
        p = _pad4(path.encode("utf-8"))
        directory += struct.pack("<I", len(p)) + p + struct.pack("<QQ", offset, size) + md5 + struct.pack("<I", 0)
    header = b"GDPC" + struct.pack("<IIIII", 3, *version, 2)
    header += struct.pack("<QQ", file_base, file_base + len(blobs)) + b"\0" * 64
    header += b"\0" * (file_base - len(header))
    return header + bytes(blobs) + bytes(directory)
