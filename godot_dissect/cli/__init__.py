"""``godot-dissect`` command line: one module per group of subcommands."""

from __future__ import annotations

import argparse
import gc
import importlib
import sys
from collections.abc import Sequence
from types import ModuleType

#: the module that registers each subcommand, in the order ``--help`` lists them: a command imports
#: only its own module (start-up time: ``read`` does not load the dataset, fuzz or Lua code)
COMMANDS = {
    "read": "read_cmds", "decode": "codec_cmds", "encode": "codec_cmds", "dialects": "spec_cmds",
    "types": "spec_cmds", "fuzz": "fuzz_cmds", "replay": "fuzz_cmds", "lua": "lua_cmds", "stats": "stats_cmds",
    "export": "dataset_cmds", "query": "dataset_cmds", "top": "top",
}


def dialect_help() -> str:
    from ..spec import DIALECTS

    return "; ".join(f"{d.name}: {d.title}" for d in DIALECTS.values())


def command_module(name: str) -> ModuleType:
    return importlib.import_module(f"{__name__}.{name}")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, or (``command``: a subcommand's name) only what that subcommand needs."""
    p = argparse.ArgumentParser(
        prog="godot-dissect",
        description="Make Godot Engine network traffic visible and testable.",
        epilog="dialects: " + dialect_help(),
    )
    sub = p.add_subparsers(dest="command", required=True)
    names = [COMMANDS[command]] if command in COMMANDS else list(dict.fromkeys(COMMANDS.values()))
    for name in names:
        command_module(name).register(sub)
    return p


#: not empty once main() froze the process's start-up objects
_STARTED: list[bool] = []


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command: ``argv``, or (run as the program) the process's arguments."""
    # the process's own start-up happens once: a caller running main() again (sys.argv set) freezes nothing more
    # (each freeze kept for ever what that run left for the collector: ~220 objects a run)
    program = argv is None and not _STARTED
    collecting = gc.isenabled()
    if program:
        # start-up makes ~20k objects (modules, classes, functions, tables) that all live until exit: collecting them is
        # wasted work, at start-up and in every later full collection, and at exit. Frozen, the collector skips
        # them (read of an empty capture: 345 -> 315 M instructions). Only for the process's own run: frozen
        # objects are never freed, so a caller in a longer-lived process keeps its own collector as it was.
        gc.disable()
    try:
        argv = list(sys.argv[1:] if argv is None else argv)
        args = build_parser(argv[0] if argv else None).parse_args(argv)  # SystemExit on --help or a bad argument
        if program:
            _STARTED.append(True)
            gc.freeze()
    finally:
        if program and collecting:  # a caller's collector as it was (after a SystemExit it caught too)
            gc.enable()
    try:
        return int(args.run(args) or 0)
    except BrokenPipeError:  # e.g. piped into head
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
