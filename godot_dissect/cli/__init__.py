"""``godot-dissect`` command line: one module per group of subcommands."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..spec import DIALECTS
from . import codec_cmds, fuzz_cmds, lua_cmds, read_cmds, spec_cmds, stats_cmds


def dialect_help() -> str:
    return "; ".join(f"{d.name}: {d.title}" for d in DIALECTS.values())


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="godot-dissect",
        description="Make Godot Engine network traffic visible and testable.",
        epilog="dialects: " + dialect_help(),
    )
    sub = p.add_subparsers(dest="command", required=True)
    for module in (read_cmds, codec_cmds, spec_cmds, fuzz_cmds, lua_cmds, stats_cmds):
        module.register(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except BrokenPipeError:  # e.g. piped into head
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
