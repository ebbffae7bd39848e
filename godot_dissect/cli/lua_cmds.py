"""``lua``: generate, check and install the Wireshark Lua dissector."""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from pathlib import Path

from ..lua.generator import COMMITTED, generate

#: the personal Lua plugin folder of Wireshark on Linux/macOS (``tshark -G folders``)
PLUGIN_DIR = Path("~/.local/lib/wireshark/plugins")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("lua", help="generate the Wireshark Lua dissector from the spec",
                       description="Generate the Wireshark Lua dissector (godot.lua) from the spec: the "
                                   "dialect tables as Lua data plus the Lua engine. Without options it is "
                                   "written to stdout.")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write to FILE (with --check: the file to compare; default lua/godot.lua)")
    p.add_argument("--check", action="store_true",
                   help="exit 1 when the file differs from what the spec generates")
    p.add_argument("--install", action="store_true",
                   help=f"copy the dissector into Wireshark's personal plugin folder ({PLUGIN_DIR})")
    p.set_defaults(run=run_lua)


def plugin_dir() -> Path:
    """Wireshark's personal Lua plugin folder (``$XDG_CONFIG_HOME`` does not move it)."""
    return PLUGIN_DIR.expanduser()


def run_lua(args: argparse.Namespace) -> int:
    text = generate()
    if args.check:
        path = Path(args.output) if args.output else COMMITTED
        try:
            current = path.read_text(encoding="utf-8")
        except OSError as e:
            print(f"godot-dissect: {path}: {e}", file=sys.stderr)
            return 1
        if current == text:
            print(f"{path} is up to date")
            return 0
        diff = difflib.unified_diff(current.splitlines(True), text.splitlines(True), str(path), "generated", n=1)
        sys.stderr.writelines(list(diff)[:60])
        print(f"\n{path} differs from what the spec generates; run `godot-dissect lua -o {path}`",
              file=sys.stderr)
        return 1
    if args.install:
        target = plugin_dir() / "godot.lua"
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".lua.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, target)
        print(f"installed {target}")
        print("Wireshark and tshark load it at start (check: tshark -G protocols | grep -w godot)")
        if args.output:
            Path(args.output).write_text(text, encoding="utf-8")
        return 0
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
