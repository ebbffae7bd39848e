"""``read``: every Godot message in a capture, as text lines, a -V tree, JSON or JSON lines."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator

from ..pcap.packets import CaptureError
from ..pcap.reader import DEBUGGER_PORTS, read_pcap
from ..records import Record
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
    r.add_argument("--kind", action="append", help="only these kinds (variant, debugger, text, error)")
    r.add_argument("--type", action="append", help="only values of these types (engine names, e.g. Dictionary)")
    r.add_argument("--message", action="append", help="only these debugger messages")
    r.add_argument("--evidence", action="store_true", help="text: print why each conversation got its dialect")
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
        return f"[malformed] {rec.error}"
    text = rec.text().replace("\n", " ")
    if len(text) > 100:
        text = text[:97] + "..."
    head = f"{rec.message} " if rec.message is not None else ""
    return f"{head}{rec.type} {text}" if rec.kind != "text" else f"text {text}"


def run_read(args: argparse.Namespace) -> int:
    debugger_ports = tuple(args.debugger_port) if args.debugger_port else DEBUGGER_PORTS
    try:
        size = os.path.getsize(args.capture)
        records = read_pcap(args.capture, args.dialect, args.port, debugger_ports, not args.no_heuristics)
        records = _filtered(_with_progress(records, size), args)
        out = sys.stdout
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
    except BrokenPipeError:  # piped into head: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (CaptureError, OSError) as e:
        print(f"godot-dissect: {e}", file=sys.stderr)
        return 2
    return 0


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
