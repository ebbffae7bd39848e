"""``read``: every Godot message in a capture, as text lines, a -V tree, JSON or JSON lines."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from typing import TextIO

from ..multiplayer.records import summary as mp_summary
from ..pcap.packets import CaptureError
from ..pcap.reader import DEBUGGER_PORTS, read_pcap
from ..records import MULTIPLAYER_KINDS, Record
from ..spec.enet import COMPRESSIONS as ENET_COMPRESSIONS
from ..spec.transports import MAX_CONVERSATIONS, MAX_HELD_BYTES
from .options import add_dialect

#: files larger than this get a progress bar on a terminal
PROGRESS_BYTES = 20 << 20


def register(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser("read", help="decode every Godot message in a pcap/pcapng capture",
                       description="Read a capture (pcap, pcapng, gzip-compressed too) and print every "
                                   "Godot message: UDP datagrams, length-prefixed TCP, WebSocket, the "
                                   "remote debugger.")
    r.add_argument("capture")
    add_dialect(r, default="auto", auto=True)
    r.add_argument("--port", "-p", type=int, action="append", default=[],
                   help="a UDP/TCP port that carries Godot Variants (repeatable)")
    r.add_argument("--debugger-port", type=int, action="append", default=None,
                   help=f"remote debugger port (repeatable; default {DEBUGGER_PORTS[0]})")
    r.add_argument("--no-heuristics", action="store_true", help="only the given ports")
    r.add_argument("--format", "-f", choices=("text", "json", "jsonl"), default="text")
    r.add_argument("-V", "--verbose", action="store_true", help="text: print each value in full")
    r.add_argument("--kind", action="append", help="only these kinds (variant, debugger, text, error, "
                                                   + ", ".join(MULTIPLAYER_KINDS) + ")")
    r.add_argument("--project", metavar="DIR", help="Godot 4 project folder: RPC method names from its "
                                                     "@rpc functions, checked against the capture's md5")
    r.add_argument("--rpc-names", metavar="JSON", help='RPC names per node path: a JSON file or text '
                                                       '{"Main": ["chat", "move"]}, checked like --project')
    r.add_argument("--no-multiplayer", action="store_true", help="read multiplayer conversations as plain Variants")
    r.add_argument("--enet-port", type=int, action="append", default=[],
                   help="a UDP port that carries ENet for sure (repeatable; others are found by a heuristic)")
    r.add_argument("--enet-control", action="store_true",
                   help="a record for every ENet control command (ACK, PING ...), not only connect/disconnect")
    r.add_argument("--enet-compression", choices=[c.name for c in ENET_COMPRESSIONS],
                   help="the codec of compressed ENet datagrams (not on the wire; default: shown as compressed)")
    r.add_argument("--type", action="append", help="only values of these types (engine names, e.g. Dictionary)")
    r.add_argument("--message", action="append", help="only these debugger messages")
    r.add_argument("--evidence", action="store_true", help="text: print why each conversation got its dialect")
    r.add_argument("--max-conversations", type=int, default=MAX_CONVERSATIONS, metavar="N",
                   help=f"conversations tracked at once (default {MAX_CONVERSATIONS}); beyond it the least recently "
                        "active is finished and what it held becomes error records")
    r.add_argument("--max-held-bytes", type=int, default=MAX_HELD_BYTES, metavar="BYTES",
                   help=f"bytes all conversations may hold (out-of-order TCP data, unfinished messages; default "
                        f"{MAX_HELD_BYTES}); beyond it the conversation holding the most is finished likewise")
    r.set_defaults(run=run_read)


def _filtered(records: Iterator[Record], args: argparse.Namespace) -> Iterator[Record]:
    for rec in records:
        if args.kind and rec.kind not in args.kind:
            continue
        if args.type and rec.type not in args.type:
            continue
        if args.message and rec.message not in args.message:
            continue
        yield rec


def _summary(rec: Record) -> str:
    if rec.kind == "error":
        return f"[malformed] {rec.command + ' ' if rec.command else ''}{rec.error}"
    text = rec.text().replace("\n", " ")
    if len(text) > 100:
        text = text[:97] + "..."
    if rec.kind in MULTIPLAYER_KINDS:
        return mp_summary(rec.kind, rec.command, rec.node, rec.method, rec.method_id, text, rec.fields, rec.peer)
    head = f"{rec.message} " if rec.message is not None else ""
    return f"{head}{rec.type} {text}" if rec.kind != "text" else f"text {text}"


def run_read(args: argparse.Namespace) -> int:
    debugger_ports = tuple(args.debugger_port) if args.debugger_port else DEBUGGER_PORTS
    try:
        rpc_names = _rpc_names(args.rpc_names)
    except (OSError, ValueError) as e:
        print(f"godot-dissect: --rpc-names: {e}", file=sys.stderr)
        return 2
    try:
        size = os.path.getsize(args.capture)
        records = read_pcap(args.capture, args.dialect, args.port, debugger_ports, not args.no_heuristics,
                            rpc_names=rpc_names, project=args.project,
                            multiplayer=not args.no_multiplayer, enet_ports=args.enet_port,
                            enet_control=args.enet_control, enet_compression=args.enet_compression,
                            max_conversations=args.max_conversations, max_held_bytes=args.max_held_bytes)
        records = _filtered(_with_progress(records, size), args)
        out = _Batched(sys.stdout)
        try:
            _write(records, args, out)
        finally:
            out.flush()
    except BrokenPipeError:  # piped into head: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (CaptureError, OSError) as e:
        print(f"godot-dissect: {e}", file=sys.stderr)
        return 2
    return 0


def _write(records: Iterator[Record], args: argparse.Namespace, out: _Batched) -> None:
    seen_evidence: set[tuple] = set()
    if args.format == "json":
        out.write("[")
        for i, rec in enumerate(records):
            out.write((",\n" if i else "\n") + rec.to_jsonl())
        out.write("\n]\n")
    elif args.format == "jsonl":
        for rec in records:
            out.write(rec.to_jsonl() + "\n")
    else:
        for rec in records:
            arrow = "→" if rec.direction == "c2s" else "←"
            ends = f"{rec.src}:{rec.sport} → {rec.dst}:{rec.dport}"
            out.write(f"{rec.frame:>7} {rec.time:.6f} {ends} {rec.transport} {arrow} {rec.dialect} "
                      f"{rec.kind} {_summary(rec)}\n")
            key = (rec.transport, *sorted([(rec.src, rec.sport), (rec.dst, rec.dport)]))
            if args.evidence and key not in seen_evidence:
                seen_evidence.add(key)
                out.write(f"        dialect evidence: {rec.evidence}\n")
            if args.verbose and rec.kind != "error":
                for line in rec.text().splitlines():
                    out.write(f"        {line}\n")


class _Batched:
    """Output joined into ~1 MB writes (thousands of small writes to a pipe cost more than the
    lines); straight through on a terminal, where lines should show as they come."""

    LIMIT = 1 << 20

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.parts: list[str] = []
        self.size = 0
        self.limit = 0 if out.isatty() else self.LIMIT

    def write(self, s: str) -> None:
        self.parts.append(s)
        self.size += len(s)
        if self.size >= self.limit:
            self.flush()

    def flush(self) -> None:
        if self.parts:
            text = "".join(self.parts)
            self.parts.clear()
            self.size = 0
            try:
                self.out.write(text)  # a text stream encodes all of it before it writes any
            except UnicodeEncodeError:
                # a code point the stream cannot encode that a writer left raw (a lone surrogate
                # in a debugger message, say): written as its escape (\udXXX), the batch kept
                enc = getattr(self.out, "encoding", None) or "utf-8"
                self.out.write(text.encode(enc, "backslashreplace").decode(enc))


def _rpc_names(arg: str | None) -> dict | None:
    """--rpc-names: a JSON file, or the JSON text itself."""
    if not arg:
        return None
    if arg.lstrip().startswith("{"):
        text = arg
    else:
        with open(arg, encoding="utf-8") as f:
            text = f.read()
    names = json.loads(text)
    if not isinstance(names, dict):
        raise ValueError("expected a JSON object {node path: [method names]}")
    return names


def _with_progress(records: Iterator[Record], size: int) -> Iterator[Record]:
    if size < PROGRESS_BYTES or not sys.stderr.isatty():
        yield from records
        return
    from rich.progress import Progress

    with Progress(transient=True, console=None) as bar:
        task = bar.add_task("reading", total=None)
        for i, rec in enumerate(records):
            if i % 1000 == 0:
                bar.update(task, description=f"frame {rec.frame}")
            yield rec
