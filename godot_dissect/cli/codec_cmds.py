"""``decode`` and ``encode``: the first crafting tools."""

from __future__ import annotations

import argparse
import re
import sys

from .. import jsonform
from ..codec import decode_prefix, encode
from ..errors import DecodeError, EncodeError
from .options import add_dialect

_HEX = re.compile(rb"^[0-9a-fA-F\s:]*$")


def register(sub: argparse._SubParsersAction) -> None:
    d = sub.add_parser("decode", help="decode one Variant from hex (or raw bytes on stdin)",
                       description="Decode a Variant. DATA is hex (spaces allowed) or - for stdin "
                                   "(hex text or raw bytes).")
    d.add_argument("data", metavar="HEX|-")
    add_dialect(d)
    d.add_argument("--format", "-f", choices=("text", "json"), default="text",
                   help="text: the engine's var_to_str notation; json: the lossless JSON form")
    d.add_argument("--allow-objects", action="store_true", help="accept full Objects (bytes_to_var_with_objects)")
    d.add_argument("--offset", type=int, default=0, help="start decoding at this byte offset")
    d.add_argument("--length-prefixed", action="store_true",
                   help="the data starts with a u32 length (StreamPeer.put_var / store_var)")
    d.set_defaults(run=run_decode)

    e = sub.add_parser("encode", help="encode a value written in Godot's text notation",
                       description="Encode a value given in var_to_str / TSCN notation "
                                   "(or the JSON form with --json) and print its bytes.")
    e.add_argument("value", metavar="VALUE|-")
    add_dialect(e)
    e.add_argument("--json", action="store_true", help="VALUE is the lossless JSON form")
    e.add_argument("--format", "-f", choices=("hex", "raw", "json"), default="hex",
                   help="hex (default), raw bytes on stdout, or JSON {\"hex\": ..., \"value\": ...}")
    e.add_argument("--full-objects", action="store_true", help="as var_to_bytes_with_objects")
    e.add_argument("--length-prefixed", action="store_true", help="prepend a u32 length (StreamPeer.put_var)")
    e.set_defaults(run=run_encode)


def _read_input(arg: str) -> bytes:
    raw = sys.stdin.buffer.read() if arg == "-" else arg.encode()
    if _HEX.match(raw):
        text = re.sub(rb"[\s:]", b"", raw)
        if len(text) % 2:
            raise SystemExit("godot-dissect: odd number of hex digits")
        return bytes.fromhex(text.decode())
    if arg != "-":
        raise SystemExit("godot-dissect: DATA is not hex; pass - to read raw bytes from stdin")
    return raw


def run_decode(args: argparse.Namespace) -> int:
    data = _read_input(args.data)
    offset = args.offset
    if not 0 <= offset <= len(data):
        print(f"error: offset {offset}: outside the {len(data)}-byte input", file=sys.stderr)
        return 1
    if args.length_prefixed:
        if len(data) - offset < 4:
            print(f"error: offset {offset}: length prefix needs 4 bytes", file=sys.stderr)
            return 1
        offset += 4
    try:
        value, used = decode_prefix(data, args.dialect, allow_objects=args.allow_objects, offset=offset)
    except DecodeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.format == "json":
        print(jsonform.json_text({"used": used, "value": jsonform.to_json(value)}))
    else:
        from ..text import to_text

        print(to_text(value, args.dialect))
    trailing = len(data) - offset - used
    if trailing > 0:
        print(f"note: {trailing} trailing bytes ignored (as the engine does)", file=sys.stderr)
    return 0


def run_encode(args: argparse.Namespace) -> int:
    text = sys.stdin.read() if args.value == "-" else args.value
    try:
        if args.json:
            value = jsonform.loads(text)
        else:
            from ..text import from_text

            value = from_text(text, args.dialect)
        data = encode(value, args.dialect, full_objects=args.full_objects)
    except (EncodeError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.length_prefixed:
        data = len(data).to_bytes(4, "little") + data
    if args.format == "raw":
        sys.stdout.buffer.write(data)
    elif args.format == "json":
        print(jsonform.json_text({"hex": data.hex(), "value": jsonform.to_json(value)}))
    else:
        print(data.hex())
    return 0
