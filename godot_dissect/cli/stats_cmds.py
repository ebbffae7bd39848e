"""``stats``: an offline network profiler: tables of calls, replication, bandwidth, ENet
reliability, Variant traffic, conversations and expert findings from one capture."""

from __future__ import annotations

import argparse
import os
import sys

from ..pcap.packets import CaptureError
from ..pcap.reader import DEBUGGER_PORTS
from ..spec.enet import COMPRESSIONS as ENET_COMPRESSIONS
from ..spec.transports import MAX_CONVERSATIONS, MAX_HELD_BYTES
from ..stats.profile import BY, DEFAULT_TABLES, TABLES
from .options import add_dialect

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
                   help="bandwidth window in seconds (default 1)")
    p.add_argument("--by", choices=BY, help="bandwidth rows per direction and this; the plot's stacks "
                                            "(default: per direction; plot stacked by node)")
    p.add_argument("--format", "-f", choices=FORMATS, default="table",
                   help="table: rich tables with human units; csv/json: plain numbers; markdown")
    p.add_argument("--plot", metavar="FILE.png", help="also draw bandwidth over time per peer and direction")
    p.add_argument("--plot-size", default="1200x800", metavar="WxH", help="plot size in pixels (default 1200x800)")
    add_dialect(p, default="auto", auto=True)
    p.add_argument("--port", "-p", type=int, action="append", default=[],
                   help="a UDP/TCP port that carries Godot Variants (repeatable)")
    p.add_argument("--debugger-port", type=int, action="append", default=None,
                   help=f"remote debugger port (repeatable; default {DEBUGGER_PORTS[0]})")
    p.add_argument("--no-heuristics", action="store_true", help="only the given ports")
    p.add_argument("--project", metavar="DIR", help="Godot 4 project folder: RPC method names from its @rpc "
                                                     "functions, checked against the capture's md5")
    p.add_argument("--rpc-names", metavar="JSON", help='RPC names per node path: a JSON file or text '
                                                       '{"Main": ["chat", "move"]}')
    p.add_argument("--no-multiplayer", action="store_true", help="read multiplayer conversations as plain Variants")
    p.add_argument("--enet-port", type=int, action="append", default=[],
                   help="a UDP port that carries ENet for sure (repeatable)")
    p.add_argument("--enet-compression", choices=[c.name for c in ENET_COMPRESSIONS],
                   help="the codec of compressed ENet datagrams (not on the wire)")
    p.add_argument("--max-conversations", type=int, default=MAX_CONVERSATIONS, metavar="N",
                   help=f"conversations the reader tracks at once (default {MAX_CONVERSATIONS}), as for read")
    p.add_argument("--max-held-bytes", type=int, default=MAX_HELD_BYTES, metavar="BYTES",
                   help=f"bytes all conversations may hold (default {MAX_HELD_BYTES}), as for read")
    p.set_defaults(run=run_stats)


def _size(text: str) -> tuple[int, int]:
    w, _, h = text.lower().partition("x")
    width, height = int(w), int(h)
    if not (16 <= width <= 10000 and 16 <= height <= 10000):
        raise ValueError("between 16 and 10000 pixels each way")
    return width, height


def run_stats(args: argparse.Namespace) -> int:
    from .read_cmds import _rpc_names

    names = args.table or list(DEFAULT_TABLES)
    unknown = [n for n in names if n not in TABLES]
    if unknown:
        print(f"godot-dissect stats: unknown table {', '.join(map(repr, unknown))}; "
              f"the tables are: {', '.join(TABLES)}", file=sys.stderr)
        return 2
    if not args.interval > 0:
        print("godot-dissect stats: --interval must be > 0 seconds", file=sys.stderr)
        return 2
    try:
        size = _size(args.plot_size) if args.plot else None
    except ValueError as e:
        print(f"godot-dissect stats: --plot-size {args.plot_size!r}: {e}", file=sys.stderr)
        return 2
    try:
        rpc_names = _rpc_names(args.rpc_names)
    except (OSError, ValueError) as e:
        print(f"godot-dissect stats: --rpc-names: {e}", file=sys.stderr)
        return 2
    from ..stats import profile

    source = sys.stdin.buffer if args.capture == "-" else args.capture
    try:
        p = profile(source, interval=args.interval, by=args.by, series=bool(args.plot), tables=tuple(names),
                    dialect=args.dialect,
                    ports=args.port, debugger_ports=tuple(args.debugger_port or DEBUGGER_PORTS),
                    heuristics=not args.no_heuristics, rpc_names=rpc_names, project=args.project,
                    multiplayer=not args.no_multiplayer, enet_ports=args.enet_port,
                    enet_compression=args.enet_compression, max_conversations=args.max_conversations,
                    max_held_bytes=args.max_held_bytes)
    except (CaptureError, OSError) as e:
        print(f"godot-dissect stats: {e}", file=sys.stderr)
        return 2
    _print(p, names, args.format)
    if args.plot:
        from ..stats.plot import bandwidth_png

        bandwidth_png(p, args.plot, *size)  # type: ignore[misc]
        print(f"plot: {args.plot}", file=sys.stderr)
    return 0


def _print(p, names: list[str], fmt: str) -> None:  # noqa: ANN001 - a stats.Profile
    from ..stats import render

    for note in p.notes:
        print(f"note: {note}", file=sys.stderr)
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
