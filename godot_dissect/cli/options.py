"""Options shared by several subcommands: the dialect, and the capture reader's options (``read_pcap``'s
keyword arguments), declared once here so every subcommand that reads captures accepts the same ones."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..pcap.reader import DEBUGGER_PORTS
from ..spec import DIALECT_NAMES, get_dialect
from ..spec.enet_compressions import COMPRESSIONS as ENET_COMPRESSIONS
from ..spec.transports import MAX_CONVERSATIONS, MAX_HELD_BYTES


def add_dialect(p: argparse.ArgumentParser, default: str = "godot4", auto: bool = False) -> None:
    choices = (("auto",) if auto else ()) + DIALECT_NAMES
    p.add_argument("--dialect", "-d", default=default, metavar="DIALECT",
                   help=f"one of {', '.join(choices)} (default {default}); "
                        "godot4-doc-table is the outdated docs page's numbering, not what Godot 4 sends; "
                        "NAME@VERSION (e.g. godot4@4.2) narrows to one engine version")


def add_read_options(p: argparse.ArgumentParser) -> None:
    """The capture reader's options (``--dialect`` included, default auto); :func:`read_options` turns them
    into ``read_pcap`` keyword arguments."""
    add_dialect(p, default="auto", auto=True)
    p.add_argument("--port", "-p", type=int, action="append", default=[],
                   help="a UDP/TCP port that carries Godot Variants (repeatable)")
    p.add_argument("--debugger-port", type=int, action="append", default=None,
                   help=f"remote debugger port (repeatable; default {DEBUGGER_PORTS[0]})")
    p.add_argument("--no-heuristics", action="store_true", help="only the given ports")
    p.add_argument("--project", metavar="DIR", help="Godot 4 project folder: RPC method names from its "
                                                     "@rpc functions, checked against the capture's md5")
    p.add_argument("--rpc-names", metavar="JSON", help='RPC names per node path: a JSON file or text '
                                                       '{"Main": ["chat", "move"]}, checked like --project')
    p.add_argument("--no-multiplayer", action="store_true", help="read multiplayer conversations as plain Variants")
    p.add_argument("--enet-port", type=int, action="append", default=[],
                   help="a UDP port that carries ENet for sure (repeatable; others are found by a heuristic)")
    p.add_argument("--enet-control", action="store_true",
                   help="a record for every ENet control command (ACK, PING ...), not only connect/disconnect")
    p.add_argument("--enet-compression", choices=[c.name for c in ENET_COMPRESSIONS],
                   help="the codec of compressed ENet datagrams (not on the wire; default: shown as compressed)")
    p.add_argument("--max-conversations", type=int, default=MAX_CONVERSATIONS, metavar="N",
                   help=f"conversations tracked at once (default {MAX_CONVERSATIONS}); beyond it the least recently "
                        "active is finished and what it held becomes error records")
    p.add_argument("--max-held-bytes", type=int, default=MAX_HELD_BYTES, metavar="BYTES",
                   help=f"bytes all conversations may hold (out-of-order TCP data, unfinished messages; default "
                        f"{MAX_HELD_BYTES}); beyond it the conversation holding the most is finished likewise")


def usage_error(msg: str, prog: str = "godot-dissect") -> int:
    """Tell the user what was wrong with the command line; the exit status for it (2, as argparse)."""
    print(f"{prog}: {msg}", file=sys.stderr)
    return 2


def read_options(args: argparse.Namespace) -> dict[str, Any]:
    """``read_pcap`` keyword arguments from the options :func:`add_read_options` declared.

    Raises ValueError naming the option (``--dialect: ...``, ``--rpc-names: ...``) when it cannot be used."""
    for name, ports in (("--port", args.port), ("--debugger-port", args.debugger_port or ()),
                        ("--enet-port", args.enet_port)):
        bad = [p for p in ports if not 0 <= p < 65536]
        if bad:
            raise ValueError(f"{name} {bad[0]}: a UDP/TCP port is 0 to 65535")
    if args.max_conversations < 1:
        raise ValueError(f"--max-conversations {args.max_conversations}: at least 1")
    if args.max_held_bytes < 0:
        raise ValueError(f"--max-held-bytes {args.max_held_bytes}: 0 or more")
    if args.dialect != "auto":
        try:
            get_dialect(args.dialect)
        except (ValueError, KeyError) as e:
            raise ValueError(f"--dialect: {e}") from None
    try:
        rpc_names = _rpc_names(args.rpc_names)
    except (OSError, ValueError) as e:
        raise ValueError(f"--rpc-names: {e}") from e
    return {"dialect": args.dialect, "ports": tuple(args.port),
            "debugger_ports": tuple(args.debugger_port) if args.debugger_port else DEBUGGER_PORTS,
            "heuristics": not args.no_heuristics, "rpc_names": rpc_names, "project": args.project,
            "multiplayer": not args.no_multiplayer, "enet_ports": tuple(args.enet_port),
            "enet_control": args.enet_control, "enet_compression": args.enet_compression,
            "max_conversations": args.max_conversations, "max_held_bytes": args.max_held_bytes}


def _rpc_names(arg: str | None) -> dict | None:
    """--rpc-names: a JSON file, or the JSON text itself."""
    if not arg:
        return None
    if arg.lstrip().startswith("{"):
        text = arg
    else:
        with open(arg, encoding="utf-8") as f:
            text = f.read()
    try:
        names = json.loads(text)
    except RecursionError:  # json recurses per nesting level
        raise ValueError("JSON nested too deep for a {node path: [method names]} object") from None
    if not isinstance(names, dict):
        raise ValueError("expected a JSON object {node path: [method names]}")
    for path, entry in names.items():
        lists = list(entry.values()) if isinstance(entry, dict) and set(entry) <= {"script", "node"} else [entry]
        if not all(isinstance(x, list) and all(isinstance(n, str) for n in x) for x in lists):
            raise ValueError(f"{path!r}: expected a list of method names, or {{\"script\": [...], \"node\": [...]}}")
    return names


def add_live_options(parser: argparse.ArgumentParser) -> None:
    """``-i/-f/-a/-w``: the live-capture options of every command that reads a capture (tshark's letters)."""
    parser.add_argument("-i", "--interface", metavar="IFACE", help="capture live on this interface (runs dumpcap)")
    parser.add_argument("-f", dest="capture_filter", metavar="FILTER", help="-i: capture filter (libpcap syntax)")
    parser.add_argument("-a", dest="autostop", action="append", metavar="COND",
                        help="-i: stop after duration:SECONDS or packets:N")
    parser.add_argument("-w", dest="write", metavar="FILE", help="-i: also save the raw capture (pcapng) here")


def live_args_problem(args: argparse.Namespace, command: str) -> str | None:
    """A usage error line when the capture file / ``-i`` choice or the ``-i``-only options do not fit."""
    if args.interface and args.capture:
        return "give a capture file or -i IFACE, not both"
    if not args.interface and not args.capture:
        return f"{command} needs a capture file or -i IFACE for a live capture (- reads standard input)"
    if not args.interface and (args.capture_filter or args.autostop or args.write):
        return "-f, -a and -w go with -i IFACE (live capture)"
    return None

