"""``fuzz`` and ``replay``: crafted packets against a live Godot server, and differential fuzzing.

Exit status: ``fuzz`` 0 when nothing was found, 1 when something was (a reproducer folder per
finding), 2 on a usage or setup error; ``fuzz --differential`` 1 when a disagreement is not explained
by a documented dialect rule; ``replay`` 1 when the target went down (the finding reproduces),
0 when it survived.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from ..spec.cli import MAX_WAIT_SECONDS
from .options import add_dialect, usage_error


def register(sub: argparse._SubParsersAction) -> None:
    f = sub.add_parser(
        "fuzz", help="fuzz a Godot server with crafted packets (or the decoder against the engines)",
        description="Send generated and mutated Variants (every type, boundary numbers, huge and off-by-one "
                    "counts and lengths, deep nesting, bad UTF-8, bad type ids and flags, typed containers, "
                    "full Objects, truncated and trailing bytes) to a server on this machine, watch it with a "
                    "known-good probe (and its process with --cmd), and save a minimised reproducer for every "
                    "way it goes down. Only loopback targets unless --allow-remote. With --differential, decode "
                    "the inputs with godot-dissect and with the real engine and report every disagreement.")
    f.add_argument("--target", "-t", metavar="URL", help="udp://HOST:PORT or tcp://HOST:PORT")
    f.add_argument("--framing", choices=("udp", "stream", "debugger3", "debugger4"),
                   help="udp: one datagram per Variant; stream: u32 length + Variant (StreamPeer.put_var); "
                        "debugger3/debugger4: remote-debugger messages (default: udp for udp://, stream for tcp://)")
    add_dialect(f)
    f.add_argument("--seed", type=int, default=0, help="generator seed (default 0): same seed, same cases")
    f.add_argument("--count", "-n", type=int, default=100_000, help="at most this many cases (default 100000)")
    f.add_argument("--duration", type=float, default=60.0, help="at most this many seconds of fuzzing (default 60)")
    f.add_argument("--rate", type=float, help="at most this many cases per second")
    f.add_argument("--cmd", help="start the target with this shell command ({host} and {port} are replaced): "
                                 "its exit or death on a signal is a finding, and findings are confirmed on a "
                                 "fresh process and minimised")
    f.add_argument("--out", "-o", default="fuzz-findings", help="folder for reproducers (default fuzz-findings)")
    f.add_argument("--keep-going", action="store_true", help="go on after a finding (restarting the target)")
    f.add_argument("--max-findings", type=int, default=20)
    f.add_argument("--allow-remote", action="store_true",
                   help="allow a target that is not a loopback address (only machines you own)")
    f.add_argument("--timeout", type=float, default=2.0, help="seconds to wait for the probe's reply (default 2)")
    f.add_argument("--reply-timeout", type=float, default=1.0,
                   help="tcp: seconds to wait for the in-band probe after each case (default 1)")
    f.add_argument("--probe-every", type=int, help="send the known-good probe every N cases "
                                                   "(default 100 for udp; tcp probes after every case)")
    f.add_argument("--probe", default=None, metavar="VALUE",
                   help='the known-good probe, in text notation (default "godot-dissect-probe")')
    f.add_argument("--no-reply", action="store_true",
                   help="the target never answers: alive means the port still accepts (default for debugger "
                        "framings)")
    f.add_argument("--seed-pcap", action="append", default=[], metavar="CAPTURE",
                   help="replay the conversations of this capture with one message mutated; its values seed "
                        "the mutations (repeatable)")
    f.add_argument("--seed-port", type=int, action="append", default=[], help="Godot port in --seed-pcap")
    f.add_argument("--seed-tscn", action="append", default=[], metavar="FILE",
                   help="values of this .tscn/.tres seed the mutations (repeatable)")
    f.add_argument("--strategy", action="append", metavar="NAME",
                   help="only these strategies: mutate, corpus, valid, deep, huge, object, frame, conversation")
    f.add_argument("--no-minimise", action="store_true", help="do not minimise findings")
    f.add_argument("--minimise-runs", type=int, default=80, help="target runs the minimiser may use (default 80)")
    f.add_argument("--minimise-seconds", type=float, default=120.0)
    f.add_argument("--ready-timeout", type=float, default=20.0,
                   help="seconds for a started (or restarted) target to answer (default 20)")
    f.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")
    f.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    f.add_argument("--differential", action="store_true",
                   help="decode the inputs with godot-dissect and with the real engine of --dialect "
                        "(godot3: Godot 3.2.3 bytes2var; godot4: Godot 4.6 bytes_to_var); no target")
    f.add_argument("--report", metavar="FILE", help="--differential: write every disagreement as JSON here")
    f.set_defaults(run=run_fuzz)

    r = sub.add_parser("replay", help="send a fuzz reproducer to a target again",
                       description="Send the cases of a reproducer folder (or a raw payload file) to the target, "
                                   "in order, checking it after each. Exit status 1 when the target goes down.")
    r.add_argument("reproducer", metavar="REPRODUCER", help="a finding folder, its finding.json, or a payload file")
    r.add_argument("--target", "-t", metavar="URL", help="default: the target the finding was made on")
    r.add_argument("--framing", choices=("udp", "stream", "debugger3", "debugger4"),
                   help="default: the reproducer's")
    r.add_argument("--dialect", "-d", help="default: the reproducer's")
    r.add_argument("--cmd", help="start the target with this shell command first")
    r.add_argument("--allow-remote", action="store_true")
    r.add_argument("--timeout", type=float, default=2.0)
    r.add_argument("--ready-timeout", type=float, default=20.0)
    r.add_argument("--pcap", help="write the exchange to this pcap")
    r.add_argument("--json", action="store_true")
    r.set_defaults(run=run_replay)


def run_fuzz(args: argparse.Namespace) -> int:
    if args.differential:
        return _run_differential(args)
    if not args.target:
        return usage_error("fuzz needs --target URL (or --differential)")
    if args.count <= 0 or not args.duration > 0:
        return usage_error("--count and --duration must be positive")
    problem = _option_problem(args)
    if problem:
        return usage_error(problem)
    from ..fuzz.campaign import PROBE_VALUE, FuzzOptions
    from ..fuzz.campaign import run_fuzz as fuzz
    from ..fuzz.cases import DEFAULT_WEIGHTS, conversations_from_pcap, seeds_from_tscn
    from ..fuzz.target import UnsafeTarget

    log = (lambda s: None) if args.quiet else (lambda s: print(s, file=sys.stderr, flush=True))
    try:
        probe = PROBE_VALUE
        if args.probe is not None:
            from ..text import from_text

            probe = from_text(args.probe, args.dialect)
        seeds, convs, sources = [], [], []
        for p in args.seed_tscn:
            seeds += seeds_from_tscn([p])
            sources.append(p)
        for p in args.seed_pcap:
            try:
                c, v = conversations_from_pcap(p, "auto", args.seed_port)
            except Exception as e:  # noqa: BLE001 - whatever reading a seed raises, it is the seed's fault
                return usage_error(f"--seed-pcap {p}: cannot read it as a capture ({type(e).__name__}: {e})")
            convs += c
            seeds += v
            sources.append(p)
        weights = None
        if args.strategy:
            unknown = set(args.strategy) - set(DEFAULT_WEIGHTS)
            if unknown:
                return usage_error(f"unknown strategy {', '.join(sorted(unknown))}; "
                                   f"choose from {', '.join(DEFAULT_WEIGHTS)}")
            weights = {k: DEFAULT_WEIGHTS[k] for k in args.strategy}
        opts = FuzzOptions(
            target=args.target, framing=args.framing, dialect=args.dialect, seed=args.seed, count=args.count,
            duration=args.duration, rate=args.rate, cmd=args.cmd, out=Path(args.out), keep_going=args.keep_going,
            max_findings=args.max_findings, allow_remote=args.allow_remote, timeout=args.timeout,
            reply_timeout=args.reply_timeout, probe_every=args.probe_every, probe_value=probe,
            expect_reply=False if args.no_reply else None, seed_values=seeds, conversations=convs,
            seed_sources=sources, weights=weights, minimise=not args.no_minimise,
            minimise_runs=args.minimise_runs, minimise_seconds=args.minimise_seconds,
            ready_timeout=args.ready_timeout)
        summary = fuzz(opts, log=log)
    except UnsafeTarget as e:
        return usage_error(str(e))
    except (ValueError, RuntimeError, OSError) as e:
        return usage_error(str(e))
    if args.json:
        print(json.dumps(summary.to_json(), indent=2))
    else:
        print(summary.text())
    return 1 if summary.findings else 0


def _wait_problem(args: argparse.Namespace, names: tuple[str, ...]) -> str | None:
    for name in names:
        v = getattr(args, name)
        if not 0 < v <= MAX_WAIT_SECONDS:  # NaN too
            return f"--{name.replace('_', '-')} {v}: between 0 and {MAX_WAIT_SECONDS:g} seconds"
    return None


def _option_problem(args: argparse.Namespace) -> str | None:
    """A usage error line for a fuzz option no campaign can run with (NaN, inf, zero or negative)."""
    if args.rate is not None and not 0 < args.rate < math.inf:
        return f"--rate {args.rate}: a positive number of cases per second"
    for name, v in (("--probe-every", args.probe_every), ("--max-findings", args.max_findings)):
        if v is not None and v < 1:
            return f"{name} {v}: at least 1"
    if args.minimise_runs < 0:
        return f"--minimise-runs {args.minimise_runs}: 0 or more"
    return _wait_problem(args, ("timeout", "reply_timeout", "ready_timeout", "minimise_seconds"))


def _run_differential(args: argparse.Namespace) -> int:
    from ..engines import EngineUnavailable
    from ..fuzz.differential import run_differential
    from ..spec import get_dialect

    d = get_dialect(args.dialect)
    if d.name not in ("godot3", "godot4"):
        return usage_error(f"--differential runs the real Godot 3.2.3 or 4.6 engine: use --dialect godot3 or godot4, "
                    f"not {d.name}")
    try:
        rep = run_differential(d.name, args.count, args.seed)
    except EngineUnavailable as e:
        return usage_error(f"engine unavailable: {e.reason}")
    if args.report:
        Path(args.report).write_text(json.dumps(rep.to_json(), indent=2) + "\n", encoding="utf-8")
    if args.json:
        doc = rep.to_json()
        doc["disagreements"] = [x for x in doc["disagreements"] if not x["rule"] or x["rule"].startswith("issue")]
        print(json.dumps(doc, indent=2))
    else:
        print(rep.text())
    bugs = [x for x in rep.disagreements if x.rule is None or x.rule.startswith("issue: ")]
    return 1 if bugs else 0


def run_replay(args: argparse.Namespace) -> int:
    from ..fuzz.campaign import replay
    from ..fuzz.target import UnsafeTarget

    problem = _wait_problem(args, ("timeout", "ready_timeout"))
    if problem:
        return usage_error(problem)
    try:
        res = replay(args.reproducer, args.target, framing=args.framing, dialect=args.dialect, cmd=args.cmd,
                     allow_remote=args.allow_remote, timeout=args.timeout, ready_timeout=args.ready_timeout,
                     pcap=args.pcap)
    except UnsafeTarget as e:
        return usage_error(str(e))
    except (ValueError, RuntimeError, OSError) as e:
        return usage_error(str(e))
    if args.json:
        print(json.dumps(res.__dict__))
    else:
        print(res.text())
    return 1 if res.killed else 0
