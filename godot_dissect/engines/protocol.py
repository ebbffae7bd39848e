"""The two halves of the driver protocol: the cases file we write and the lines the driver prints.

cases.bin (little endian; read by probe3.gd / probe4.gd):
  u32 n_enc, u32 n_dec, str batch_source,
  n_enc x (u32 index, str standalone_source),
  n_dec x (u32 index, u8 allow_objects, u32 length, bytes)
where str = u32 length + UTF-8.  Decode inputs travel as raw bytes rather than hex because Godot 3
has no String.hex_decode(), and a GDScript hex parser would dominate the run time.

Each encode case becomes a function ``c<index>()`` that runs the setup and returns ``[expr]``; a
script error aborts the function, which then returns null instead of an Array.  All functions are
compiled as one script (fast); if that fails to compile, the driver compiles each case alone.
"""

from __future__ import annotations

import re
import struct
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .model import ERROR_CODES, DecodeCase, DecodeResult, EncodeCase, EncodeResult

TAG = "@@GDX:"


def case_function(index: int, case: EncodeCase) -> str:
    if "\n" in case.expr or "\r" in case.expr:
        raise ValueError(f"encode case {case.name!r}: expr must be a single line")
    body = [
        "\t" + line if line.strip() else ""
        for line in textwrap.dedent(case.setup.replace("\r\n", "\n")).strip("\n").splitlines()
    ]
    return "\n".join([f"func c{index}():", *body, f"\treturn [{case.expr}]", ""])


def build_cases_file(
    base_class: str,
    encode: Sequence[tuple[int, EncodeCase]],
    decode: Sequence[tuple[int, DecodeCase]],
) -> bytes:
    """Serialise the cases; ``base_class`` is "Reference" (3.x) or "RefCounted" (4.x)."""
    header = f"extends {base_class}\n\n"
    funcs = [(index, case_function(index, case)) for index, case in encode]
    out = bytearray(struct.pack("<II", len(encode), len(decode)))
    out += _str(header + "\n".join(src for _, src in funcs))
    for index, src in funcs:
        out += struct.pack("<I", index) + _str(header + src)
    for index, case in decode:
        out += struct.pack("<IBI", index, int(case.allow_objects), len(case.data)) + case.data
    return bytes(out)


def _str(s: str) -> bytes:
    raw = s.encode("utf-8")
    return struct.pack("<I", len(raw)) + raw


# --- parsing -------------------------------------------------------------------------------------

# "Condition ... is true. Returned: ERR_FILE_EOF" (3.x) / "... Returning: ERR_FILE_EOF" (3.x, 4.x).
_RETURN_CODE = re.compile(r"Return(?:ed|ing): (ERR_[A-Z_]+|FAILED)\b")
# Decoder failures whose message replaces the code (ERR_FAIL_*_MSG prints only the message).
_MESSAGE_CODES: tuple[tuple[str, str], ...] = (
    ("Variant is too deep", "ERR_OUT_OF_MEMORY"),
    ("Cannot get class", "ERR_UNAVAILABLE"),
    ('Parameter "obj" is null', "ERR_UNAVAILABLE"),
    ("Invalid script path", "ERR_INVALID_DATA"),
    ("Can't load script at path", "ERR_INVALID_DATA"),
    ('Invalid value for "script" property', "ERR_INVALID_DATA"),
    ("Invalid container type kind", "ERR_INVALID_DATA"),
    ("is out of bounds (Variant::VARIANT_MAX", "ERR_INVALID_DATA"),
)


def error_code_from_messages(messages: Iterable[str]) -> int | None:
    """The first decoder error code named in the engine's messages (the innermost failure)."""
    for line in messages:
        m = _RETURN_CODE.search(line)
        if m:
            return ERROR_CODES[m.group(1)]
        for needle, name in _MESSAGE_CODES:
            if needle in line:
                return ERROR_CODES[name]
    return None


def _hex(field_: str) -> bytes:
    return bytes.fromhex(field_)


def _text(field_: str) -> str:
    return bytes.fromhex(field_).decode("utf-8", errors="surrogateescape")


@dataclass
class RunOutput:
    """One engine process, parsed."""

    version: str | None = None
    ended: bool = False
    fatal: str | None = None
    encoded: dict[int, EncodeResult] = field(default_factory=dict)
    decoded: dict[int, DecodeResult] = field(default_factory=dict)
    # the case that was started but never reported: ("e" | "d", index, its messages)
    unfinished: tuple[str, int, tuple[str, ...]] | None = None
    other_lines: list[str] = field(default_factory=list)


def parse_output(stderr: str, names: dict[int, str]) -> RunOutput:
    """Parse the driver's stderr; ``names`` maps encode case index to case name."""
    out = RunOutput()
    current: tuple[str, int] | None = None
    messages: list[str] = []
    # split("\n"), not splitlines(): the latter also splits on characters that engine messages may quote.
    lines = stderr.split("\n")
    if lines[-1] == "":
        lines.pop()
    for raw in lines:
        line = raw.rstrip("\r")
        if not line.startswith(TAG):
            out.other_lines.append(line)
            if current is not None:
                messages.append(line)
            continue
        parts = line[len(TAG) :].split("\t")
        kind = parts[0]
        try:
            if kind in ("e", "d"):
                current, messages = (kind, int(parts[1])), []
            elif kind == "E":
                index = int(parts[1])
                out.encoded[index] = _encode_result(names[index], parts, tuple(messages))
                current = None
            elif kind == "D":
                index = int(parts[1])
                out.decoded[index] = _decode_result(parts, tuple(messages))
                current = None
        except (ValueError, IndexError, KeyError):
            # A line cut short by a crash; its case stays unfinished and is treated as the crasher.
            out.other_lines.append(line[:200] + "...")
            continue
        if kind == "BEGIN":
            out.version = parts[1]
        elif kind == "END":
            out.ended = True
        elif kind == "FATAL":
            out.fatal = "\t".join(parts[1:])
    if current is not None:
        out.unfinished = (current[0], current[1], tuple(messages))
    return out


def _encode_result(name: str, parts: list[str], messages: tuple[str, ...]) -> EncodeResult:
    if parts[2] != "ok":
        return EncodeResult(name=name, error=parts[2], messages=messages)
    return EncodeResult(
        name=name,
        type_id=int(parts[3]),
        data=_hex(parts[4]),
        data_full=_hex(parts[5]),
        text=_text(parts[6]),
        messages=messages,
    )


def _decode_result(parts: list[str], messages: tuple[str, ...]) -> DecodeResult:
    index = int(parts[1])
    if parts[2] != "1":
        return DecodeResult(index=index, ok=False, error=error_code_from_messages(messages), messages=messages)
    return DecodeResult(
        index=index,
        ok=True,
        error=0,
        type_id=int(parts[3]),
        used=None if parts[4] == "-" else int(parts[4]),
        text=_text(parts[5]),
        reencoded=_hex(parts[6]),
        messages=messages,
    )
