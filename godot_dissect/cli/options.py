"""Options shared by several subcommands."""

from __future__ import annotations

import argparse

from ..spec import DIALECT_NAMES


def add_dialect(p: argparse.ArgumentParser, default: str = "godot4", auto: bool = False) -> None:
    choices = (("auto",) if auto else ()) + DIALECT_NAMES
    p.add_argument("--dialect", "-d", default=default, metavar="DIALECT",
                   help=f"one of {', '.join(choices)} (default {default}); "
                        "godot4-doc-table is the outdated docs page's numbering, not what Godot 4 sends; "
                        "NAME@VERSION (e.g. godot4@4.2) narrows to one engine version")
