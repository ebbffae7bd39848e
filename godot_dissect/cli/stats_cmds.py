"""``stats``: an offline network profiler: tables of calls, replication, bandwidth, ENet
reliability, Variant traffic, conversations and expert findings from one capture."""

from __future__ import annotations

import argparse
import os
import sys

from ..pcap.packets import CaptureError
from ..spec.stats import MAX_INTERVAL, MIN_INTERVAL
from ..stats.profile import BY, DEFAULT_TABLES, TABLES
from ..stats.traffic import check_interval
from .options import add_read_options, read_options, usage_error

FORMATS = ("table", "csv", "json", "markdown")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("stats", help="profiler tables from a capture (rpc, sync, bandwidth, enet, ...)",
                       description="Read a capture once and print tables: " + ", ".join(TABLES) + ". "
                                   "Bytes are both the application's (what MultiplayerAPI/SceneMultiplayer "
                                   "or get_var see) and the wire's (each frame's bytes shared among the "
                                   "messages it carried).")
    p.add_argument("capture", help='pcap/pcapng file, or "-" for stdin')
    p.add_argument("--table", "-t", action="append", metavar="T",
                   help=f"a table to print (repeatable): {', '.join(TABLES)} (default: {', '.join(DEFAULT_TABLES)})")
    p.add_argument("--interval", type=float, default=1.0, metavar="S",
                   help=f"bandwidth window in seconds, {MIN_INTERVAL:g} to {MAX_INTERVAL:g} (default 1)")
    p.add_argument("--by", choices=BY, help="bandwidth rows per direction and this; the plot's stacks "
                                            "(default: per direction; plot stacked by node)")
    p.add_argument("--format", "-f", choices=FORMATS, default="table",
                   help="table: rich tables with human units; csv/json: plain numbers; markdown")
    p.add_argument("--plot", metavar="FILE.png", help="also draw bandwidth over time per peer and direction")
    p.add_argument("--plot-size", default="1200x800", metavar="WxH", help="plot size in pixels (default 1200x800)")
    add_read_options(p)
    p.set_defaults(run=run_stats)


def _size(text: str) -> tuple[int, int]:
    w, _, h = text.lower().partition("x")
    width, height = int(w), int(h)
    if not (16 <= width <= 10000 and 16 <= height <= 10000):
        raise ValueError("between 16 and 10000 pixels each way")
    return width, height


def _plot_problem(path: str) -> str | None:
    """Why the plot cannot be written at ``path``: said before the capture is read, not as a traceback after."""
    folder = os.path.dirname(path) or "."
    if os.path.isdir(path):
        return "is a folder"
    if not os.path.isdir(folder):
        return f"no folder {folder}"
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        return "not writable"
    return None


def run_stats(args: argparse.Namespace) -> int:
    names = args.table or list(DEFAULT_TABLES)
    unknown = [n for n in names if n not in TABLES]
    if unknown:
        return usage_error(f"unknown table {', '.join(map(repr, unknown))}; the tables are: {', '.join(TABLES)}",
                           "godot-dissect stats")
    try:
        check_interval(args.interval)
    except ValueError as e:
        return usage_error(f"--interval: {e}", "godot-dissect stats")
    try:
        size = _size(args.plot_size) if args.plot else None
    except ValueError as e:
        return usage_error(f"--plot-size {args.plot_size!r}: {e}", "godot-dissect stats")
    if args.plot and (problem := _plot_problem(args.plot)):
        return usage_error(f"--plot {args.plot}: {problem}", "godot-dissect stats")
    try:
        options = read_options(args)
    except ValueError as e:
        return usage_error(str(e), "godot-dissect stats")
    from ..stats import profile

    source = sys.stdin.buffer if args.capture == "-" else args.capture
    try:
        p = profile(source, interval=args.interval, by=args.by, series=bool(args.plot), tables=tuple(names),
                    **options)
    except (CaptureError, OSError) as e:
        return usage_error(str(e), "godot-dissect stats")
    _print(p, names, args.format)
    if args.plot:
        from ..stats.plot import bandwidth_png

        try:
            bandwidth_png(p, args.plot, *size)  # type: ignore[misc]
        except OSError as e:  # the folder went away meanwhile, the disk is full
            print(f"godot-dissect stats: --plot {args.plot}: {e.strerror or e}", file=sys.stderr)
            return 1
        print(f"plot: {args.plot}", file=sys.stderr)
    return 0


def _print(p, names: list[str], fmt: str) -> None:  # noqa: ANN001 - a stats.Profile
    from ..stats import render

    for note in p.notes:
        print(f"note: {note}", file=sys.stderr)
    # names from the wire (Dictionary keys, methods, nodes) may hold a lone surrogate (a Godot 3
    # String is not checked UTF-8): written as \udXXX (in JSON, the escape that reads back), not a crash
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="backslashreplace")
    if fmt == "csv":
        sys.stdout.write(render.csv_text(p, names))
    elif fmt == "json":
        sys.stdout.write(render.json_text(p, names))
    elif fmt == "markdown":
        sys.stdout.write(render.markdown_text(p, names))
    else:
        from rich.console import Console

        console = Console(width=None if sys.stdout.isatty() else int(os.environ.get("COLUMNS", "160")))
        if p.records == 0:
            console.print("no Godot message in this capture")
        for table in render.rich_tables(p, names):
            console.print(table)
