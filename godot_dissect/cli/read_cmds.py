"""``read``: every Godot message in a capture (a file, standard input or a live dumpcap capture), as text lines,
a -V tree, JSON, JSON lines or tshark-style fields, selected by a display filter (``filter.py``)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TextIO

from ..pcap.packets import CaptureError
from ..pcap.reader import PcapReader, read_pcap
from ..records import KINDS, MULTIPLAYER_KINDS, Record, compiled_text_writer, variant_line_writer
from ..spec import DIALECTS
from ..spec.debugger import MESSAGES as DEBUGGER_MESSAGES
from .options import add_live_options, add_read_options, live_args_problem, read_options, usage_error

#: text lines: what stands between a record's two ends, and the arrow of each direction
ENDS = "→"
ARROWS = {"c2s": "→", "s2c": "←"}
_SUMMARY_ARROWS = (ENDS, ARROWS["c2s"], ARROWS["s2c"])  # as the compiled text writer takes them
#: most characters of a value's text on its record's line (longer: cut, with "...")
SUMMARY_CHARS = 100
#: files larger than this get a progress bar on a terminal
PROGRESS_BYTES = 20 << 20


class _NeverRaised(Exception):
    """Stands for an error class whose module was not needed (so it cannot have been raised)."""


def _loaded(module: str, name: str) -> type[Exception]:
    """``module.name`` if that module of this package is loaded, else _NeverRaised: the display filter
    (lark) and live capture load only when -Y / -T fields / -i ask for them (start-up time)."""
    loaded = sys.modules.get(f"{__package__}.{module}")
    return getattr(loaded, name) if loaded is not None else _NeverRaised


def register(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser("read", help="decode every Godot message in a pcap/pcapng capture",
                       description="Read a capture (pcap, pcapng, gzip-compressed too) and print every "
                                   "Godot message: UDP datagrams, length-prefixed TCP, WebSocket, the "
                                   "remote debugger.")
    r.add_argument("capture", nargs="?", help="the capture file; - reads pcap/pcapng from standard input")
    add_read_options(r)
    r.add_argument("--format", "-T", choices=("text", "json", "jsonl", "fields"), default="text",
                   help="text lines (default), a JSON array, JSON lines, or the -e fields (as tshark -T fields)")
    r.add_argument("-e", dest="fields", action="append", default=[], metavar="FIELD",
                   help="-T fields: a field to print (repeatable; names as in -Y)")
    r.add_argument("-E", dest="field_options", action="append", default=[], metavar="OPTION=VALUE",
                   help="-T fields: separator=/t|/s|C, header=y|n, quote=d|s|n, aggregator=,|/s|C (as tshark)")
    r.add_argument("-Y", "--filter", metavar="EXPR",
                   help="display filter over record fields, e.g. 'kind == rpc && method contains \"move\"' "
                        "(== != < <= > >= and or not contains matches in {...}; see the README)")
    r.add_argument("-c", "--count", type=int, metavar="N", help="stop after N printed records")
    r.add_argument("-l", dest="line_buffered", action="store_true",
                   help="flush after each record (always on a terminal)")
    add_live_options(r)
    r.add_argument("-V", "--verbose", action="store_true", help="text: print each value in full")
    r.add_argument("--kind", action="append", help="only these kinds (" + ", ".join(KINDS) + ")")
    r.add_argument("--type", action="append", help="only values of these types (engine names, e.g. Dictionary)")
    r.add_argument("--message", action="append", help="only these debugger messages")
    r.add_argument("--evidence", action="store_true", help="text: print why each conversation got its dialect")
    r.set_defaults(run=run_read)


def _choices(option: str, given: list[str] | None, valid: Iterable[str], open_if: str | None = None) -> str | None:
    """An error line for the first value of --kind/--type/--message that is not a valid one (wrong case too)."""
    valid = list(dict.fromkeys(valid))
    for v in given or ():
        if v in valid or (open_if and open_if in v):
            continue
        same = [x for x in valid if x.lower() == v.lower()]
        hint = f" (did you mean {same[0]}?)" if same else ""
        return f"{option} {v!r} is not one of the {len(valid)} valid values{hint}: {', '.join(valid)}"
    return None


def _type_names() -> list[str]:
    return [e.name for d in DIALECTS.values() for e in d.entries] + ["text"]


def _check_options(args: argparse.Namespace) -> str | None:
    """One error line for a wrong option value, or None."""
    for problem in (_choices("--kind", args.kind, KINDS), _choices("--type", args.type, _type_names()),
                    _choices("--message", args.message, DEBUGGER_MESSAGES, open_if=":")):
        if problem:
            return problem
    problem = live_args_problem(args, "read")
    if problem:
        return problem
    if args.count is not None and args.count < 0:
        return "-c must be 0 or more"
    if args.format == "fields" and not args.fields:
        return "-T fields needs at least one -e FIELD"
    if args.fields and args.format != "fields":
        return "-e FIELD goes with -T fields"
    return None


def _selection(args: argparse.Namespace) -> Callable[[Record], bool] | None:
    """--kind, --type, --message and -Y as one predicate (None: every record)."""
    tests: list[Callable[[Record], bool]] = []
    if args.kind:
        kinds = set(args.kind)
        tests.append(lambda rec: rec.kind in kinds)
    if args.type:
        types = set(args.type)
        tests.append(lambda rec: rec.type in types)
    if args.message:
        messages = set(args.message)
        tests.append(lambda rec: rec.message in messages)
    if args.filter:
        from .filter import compile_filter

        tests.append(compile_filter(args.filter))
    if not tests:
        return None
    if len(tests) == 1:
        return tests[0]
    return lambda rec: all(t(rec) for t in tests)


def _selected(records: Iterator[Record], keep: Callable[[Record], bool] | None, count: int | None) -> Iterator[Record]:
    if keep is None and count is None:
        return records  # every record: no generator in between
    return _selecting(records, keep, count)


def _selecting(records: Iterator[Record], keep: Callable[[Record], bool] | None, count: int | None) -> Iterator[Record]:
    if count == 0:
        return
    n = 0
    for rec in records:
        if keep is None or keep(rec):
            yield rec
            n += 1
            if count is not None and n >= count:
                return


def text_line(rec: Record) -> str:
    """A record's line in the default text output (the reference for ``summary_line`` in ``codec/_render.c``)."""
    ends = f"{rec.src}:{rec.sport} {ENDS} {rec.dst}:{rec.dport}"
    return (f"{rec.frame:>7} {rec.time:.6f} {ends} {rec.transport} {ARROWS[rec.direction]} {rec.dialect} "
            f"{rec.kind} {_summary(rec)}\n")


def _summary(rec: Record) -> str:
    if rec.kind == "error":
        return f"[malformed] {rec.command + ' ' if rec.command else ''}{rec.error}"
    if rec.kind == "compressed":
        return f"{rec.command} [compressed] {(rec.fields or {}).get('reason', '')}"
    text = rec.text_start(SUMMARY_CHARS + 1).replace("\n", " ")
    if len(text) > SUMMARY_CHARS:
        text = text[:SUMMARY_CHARS - 3] + "..."
    if rec.kind in MULTIPLAYER_KINDS:
        from ..multiplayer.records import summary as mp_summary

        return mp_summary(rec.kind, rec.command, rec.node, rec.method, rec.method_id, text, rec.fields, rec.peer)
    head = f"{rec.message} " if rec.message is not None else ""
    return f"{head}{rec.type} {text}" if rec.kind != "text" else f"text {text}"


def run_read(args: argparse.Namespace) -> int:
    problem = _check_options(args)
    if problem:
        return usage_error(problem)
    try:
        keep = _selection(args)
        fields = None
        if args.format == "fields":
            from .fields import FieldWriter

            fields = FieldWriter(args.fields, args.field_options)
    except _loaded("filter", "FilterError") as e:
        return usage_error(f"-Y: {e}")
    except ValueError as e:
        return usage_error(str(e))
    try:
        options = read_options(args)
    except ValueError as e:
        return usage_error(str(e))
    live = None
    try:
        if args.interface:
            from .live import start_live

            live = start_live(args)
        source: Any = live.stream if live is not None else args.capture
        out = _Batched(sys.stdout, line_buffered=args.line_buffered or live is not None)
        progress = source != "-" and isinstance(source, str) and _shows_progress(os.path.getsize(source))
        writers = _line_writers(args) if keep is None and args.count is None and not progress \
            and not out.per_record else None
        try:
            if writers is not None:  # every record written as its line, as it comes
                out.write_lines(PcapReader(source, **options).lines(*writers), newline=args.format == "jsonl")
            else:
                records = read_pcap(source, **options)
                _write(_selected(_progress(records) if progress else records, keep, args.count), args, out, fields)
        except KeyboardInterrupt:  # Ctrl-C on a file: stop with what was printed
            pass
        finally:
            out.flush()
    except BrokenPipeError:  # piped into head: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except _loaded("live", "LiveError") as e:
        return usage_error(str(e))
    except _loaded("filter", "FilterError") as e:  # a regex search that ran over spec.cli.MAX_MATCH_SECONDS
        return usage_error(f"-Y: {e}")
    except (CaptureError, OSError) as e:
        failed = live.failure() if live is not None else None
        return usage_error(failed or str(e))
    finally:
        if live is not None:
            live.__exit__(None, None, None)
    failed = live.failure() if live is not None else None
    return usage_error(failed) if failed else 0


def _line_writers(args: argparse.Namespace) -> tuple[Callable[[str, int], Any], Callable[[Record], str]] | None:
    """For ``PcapReader.lines``, when every record is one line of the output (``jsonl``; text without
    -V or --evidence): the compiled writer of a Variant message's line from its bytes
    (``records.variant_line_writer``) and the line of any other record, as ``_write`` writes them."""
    if args.format == "jsonl":
        return variant_line_writer, Record.to_jsonl
    if args.format == "text" and not args.verbose and not args.evidence:
        summary = (SUMMARY_CHARS, _SUMMARY_ARROWS)
        return (lambda dialect, max_depth: variant_line_writer(dialect, max_depth, summary)), _text_record_line
    return None


def _text_record_line(rec: Record) -> str:
    """A record's line of the default text output: the compiled text writer's, or ``text_line``."""
    kind = rec.kind
    if (kind == "variant" or kind == "debugger") and (w := compiled_text_writer(rec.dialect)) is not None \
            and (line := w.summary_line(rec, rec.type, SUMMARY_CHARS, _SUMMARY_ARROWS)) is not None:
        return line  # text_line's line, written by the compiled text writer (codec/_render.c)
    return text_line(rec)


def _write(records: Iterator[Record], args: argparse.Namespace, out: _Batched, fields: Any) -> None:
    seen_evidence: set[tuple] = set()
    if fields is not None:
        if fields.header:
            out.write(fields.header_line())
        for rec in records:
            out.write(fields.line(rec))
            out.record_done()
    elif args.format == "json":
        out.write("[")
        try:
            for i, rec in enumerate(records):
                out.write((",\n" if i else "\n") + rec.to_jsonl())
                out.record_done()
        finally:  # the array is closed on Ctrl-C too
            out.write("\n]\n")
    elif args.format == "jsonl":
        if out.per_record:
            for rec in records:
                out.write(rec.to_jsonl() + "\n")
                out.record_done()
        else:
            out.write_lines(rec.to_jsonl() for rec in records)
    else:
        for rec in records:
            out.write(_text_record_line(rec))
            if args.evidence:
                key = (rec.transport, *sorted([(rec.src, rec.sport), (rec.dst, rec.dport)]))
                if key not in seen_evidence:
                    seen_evidence.add(key)
                    out.write(f"        dialect evidence: {rec.evidence}\n")
            if args.verbose and rec.kind not in ("error", "compressed"):
                for line in rec.text().splitlines():
                    out.write(f"        {line}\n")
            out.record_done()


class _Batched:
    """Output joined into ~64 kB writes (thousands of small writes to a pipe cost more than the
    lines; a batch of a megabyte or more is a fresh memory mapping each time, whose page faults cost
    more than the writes saved); flushed after every record on a terminal, with -l and in a live capture."""

    LIMIT = 1 << 16

    def __init__(self, out: TextIO, line_buffered: bool = False) -> None:
        self.out = out
        self.parts: list[str] = []
        self.size = 0
        self.per_record = line_buffered or out.isatty()
        self.limit = self.LIMIT

    def write(self, s: str) -> None:
        self.parts.append(s)
        self.size += len(s)
        if self.size >= self.limit:
            self.flush()

    def write_lines(self, lines: Iterable[str], newline: bool = True) -> None:
        """Each of ``lines`` and a newline (``newline=False``: lines that end with theirs), not flushed per
        record: for a batched output."""
        batch: list[str] = []
        size = 0
        join = "\n".join if newline else "".join
        try:
            for line in lines:
                batch.append(line)
                size += len(line)
                if size >= self.limit:
                    batch.append("")  # the join ends with a newline: no second copy of the batch to add it
                    self.write(join(batch))
                    self.flush()
                    batch.clear()
                    size = 0
        finally:  # what was made before a Ctrl-C is kept
            if batch:
                batch.append("")
                self.write(join(batch))

    def record_done(self) -> None:
        if self.per_record:
            self.flush()
            self.out.flush()

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


def _shows_progress(size: int) -> bool:
    return size >= PROGRESS_BYTES and sys.stderr.isatty()


def _progress(records: Iterator[Record]) -> Iterator[Record]:
    from rich.progress import Progress

    with Progress(transient=True, console=None) as bar:
        task = bar.add_task("reading", total=None)
        for i, rec in enumerate(records):
            if i % 1000 == 0:
                bar.update(task, description=f"frame {rec.frame}")
            yield rec
