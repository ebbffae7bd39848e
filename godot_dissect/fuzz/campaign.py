"""The fuzz loop against a live target, finding detection, reproducers, ``replay``.

A finding is any of: the connection refused or reset; no reply, within the timeout, to the
known-good probe sent after a suspicious packet (and every ``probe_every`` packets); or, when the
fuzzer started the target (``cmd``), the process exiting or dying on a signal. Then:

1. with ``cmd``: the cases sent since the last good probe are replayed one by one, last first, each
   against a fresh target, to find the one that kills it alone (else the whole sequence);
2. with ``cmd``: the killer is minimised (``minimise.py``);
3. a reproducer folder is written (``reproducer.py``);
4. the run stops, or with ``keep_going`` restarts the target (or waits for it to come back) and goes on.
"""

from __future__ import annotations

import shlex
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..codec import encode
from ..spec import get_dialect
from . import reproducer
from .cases import Case, CaseGenerator
from .framing import Framer
from .minimise import Minimiser, MinimiseResult
from .pcapout import write_exchange
from .process import TargetProcess, describe_status
from .target import Event, TcpSender, UdpSender, make_sender, parse_target

PROBE_VALUE = "godot-dissect-probe"


@dataclass
class FuzzOptions:
    target: str
    framing: str | None = None  # default: udp for udp://, stream for tcp://
    dialect: str = "godot4"
    seed: int = 0
    count: int = 100_000
    duration: float = 60.0
    rate: float | None = None  # cases per second (None: as fast as possible)
    cmd: str | None = None
    out: Path = Path("fuzz-findings")
    keep_going: bool = False
    max_findings: int = 20
    allow_remote: bool = False
    timeout: float = 2.0  # known-good probe timeout
    reply_timeout: float = 1.0  # in-band probe after each stream case
    probe_every: int | None = None  # default: 100 (udp), 1 (tcp: the in-band probe), 50 (tcp, no replies)
    probe_value: Any = PROBE_VALUE
    expect_reply: bool | None = None  # default: True for udp/stream, False for the debugger framings
    seed_values: list[tuple[str, Any]] = field(default_factory=list)
    conversations: list[list[bytes]] = field(default_factory=list)
    seed_sources: list[str] = field(default_factory=list)  # for the reproducer's record
    weights: dict[str, float] | None = None
    minimise: bool = True
    minimise_runs: int = 80
    minimise_seconds: float = 120.0
    ready_timeout: float = 20.0
    start_index: int = 0


@dataclass
class Finding:
    number: int
    kind: str  # "crash" | "exit" | "hang" | "refused" | "reset" | "no reply" | ...
    detail: str
    case: Case
    confirmed: bool
    path: Path | None = None
    signal: int | None = None
    sequence: int = 1
    minimised: MinimiseResult | None = None
    elapsed: float = 0.0  # seconds from the start of fuzzing to the detection
    cases_before: int = 0  # cases sent up to the detection
    replay: str = ""  # the command that sends it again (finding.json's "replay")

    def line(self) -> str:
        c = self.case
        mini = ""
        if self.minimised is not None:
            mini = f", minimised {self.minimised.original_size} -> {len(self.minimised.case.payload)} bytes"
        return (f"#{self.number} {self.kind}: {self.detail} after {self.elapsed:.1f} s — case {c.index} "
                f"({c.strategy}: {c.name[:90]}), "
                f"{len(c.payload)} bytes{mini}{'' if self.confirmed else ' (not confirmed)'} -> {self.path}")


@dataclass
class FuzzSummary:
    target: str
    dialect: str
    framing: str
    seed: int
    cases: int = 0
    packets: int = 0
    bytes: int = 0
    probes: int = 0
    seconds: float = 0.0
    strategies: Counter = field(default_factory=Counter)
    findings: list[Finding] = field(default_factory=list)
    stopped: str = ""
    target_starts: int = 0
    handling: float = 0.0  # seconds spent confirming, minimising and saving findings

    @property
    def rate(self) -> float:
        busy = self.seconds - self.handling
        return self.cases / busy if busy > 0 else 0.0

    def text(self) -> str:
        lines = [f"fuzzed {self.target} ({self.framing}, {self.dialect}, seed {self.seed}): {self.cases} cases, "
                 f"{self.packets} packets, {self.bytes} bytes in {self.seconds:.1f} s ({self.rate:.0f} cases/s"
                 f"{f', {self.handling:.1f} s on findings' if self.handling else ''}), "
                 f"{self.probes} liveness probes; stopped: {self.stopped}",
                 "  strategies: " + ", ".join(f"{k} {v}" for k, v in self.strategies.most_common())]
        if self.target_starts:
            lines.append(f"  target started {self.target_starts} times")
        if not self.findings:
            lines.append("  no finding")
        for f in self.findings:
            lines.append("  " + f.line())
            if f.replay:
                lines.append(f"     replay: {f.replay}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target, "dialect": self.dialect, "framing": self.framing, "seed": self.seed,
                "cases": self.cases, "packets": self.packets, "bytes": self.bytes, "probes": self.probes,
                "seconds": round(self.seconds, 3), "finding_seconds": round(self.handling, 3),
                "rate": round(self.rate, 1), "stopped": self.stopped,
                "strategies": dict(self.strategies), "target_starts": self.target_starts,
                "findings": [{"number": f.number, "kind": f.kind, "detail": f.detail, "path": str(f.path),
                              "case_index": f.case.index, "strategy": f.case.strategy, "name": f.case.name,
                              "payload_size": len(f.case.payload), "confirmed": f.confirmed, "signal": f.signal,
                              "elapsed": round(f.elapsed, 3), "cases_before": f.cases_before,
                              "minimised": f.minimised.to_json() if f.minimised else None, "replay": f.replay}
                             for f in self.findings]}


@dataclass
class Verdict:
    killed: bool
    kind: str = ""
    detail: str = ""
    signal: int | None = None
    events: list[Event] = field(default_factory=list)


class Harness:
    """A target, how to talk to it, and (with ``cmd``) the process behind it."""

    def __init__(self, target_url: str, framing: str | None, dialect: str, *, cmd: str | None = None,
                 allow_remote: bool = False, timeout: float = 2.0, reply_timeout: float = 1.0,
                 probe_value: Any = PROBE_VALUE, expect_reply: bool | None = None, ready_timeout: float = 20.0,
                 log_path: Path | None = None, log: Callable[[str], None] | None = None) -> None:
        self.target = parse_target(target_url, allow_remote)
        self.framing = framing or ("udp" if self.target.scheme == "udp" else "stream")
        if (self.framing == "udp") != (self.target.scheme == "udp"):
            raise ValueError(f"framing {self.framing} needs a {'udp' if self.framing == 'udp' else 'tcp'}:// target")
        self.dialect = get_dialect(dialect).name
        self.framer = Framer(self.framing, self.dialect)
        self.expect_reply = (self.framing not in ("debugger3", "debugger4")) if expect_reply is None else expect_reply
        self.probe = self.framer.probe(probe_value)
        self.probe_value = probe_value
        self.timeout = timeout
        self.sender: UdpSender | TcpSender = make_sender(self.target, timeout, reply_timeout)
        self.in_band = self.target.scheme == "tcp" and self.expect_reply
        self.log = log or (lambda s: print(s, file=sys.stderr))
        self.proc = None
        if cmd:
            self.proc = TargetProcess(cmd, self.target.host, self.target.port,
                                      log_path or Path("fuzz-target.log"), ready_timeout)
        self.ready_timeout = ready_timeout

    # -- liveness ------------------------------------------------------------------------------------
    def alive(self, retries: int = 3, timeout: float | None = None) -> tuple[bool, str]:
        why = ""
        for _ in range(max(1, retries)):
            if self.proc is not None and self.proc.poll() is not None:
                return False, "process gone"
            ok, why = self.sender.alive(self.probe, timeout or self.timeout, self.expect_reply)
            if ok:
                return True, why
            if "refused" in why or "reset" in why:
                break
        return False, why

    def start(self) -> None:
        if self.proc is not None:
            self.proc.start(lambda: self.sender.alive(self.probe, 0.3, self.expect_reply)[0])
            if isinstance(self.sender, UdpSender):
                self.sender.reset()

    def ensure_up(self) -> bool:
        """The target answers (restarted if we own it); False if it does not come back."""
        if self.proc is not None:
            if self.proc.poll() is None and self.alive(retries=1, timeout=min(self.timeout, 1.0))[0]:
                return True
            self.start()
            return True
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            if self.alive(retries=1, timeout=1.0)[0]:
                return True
            time.sleep(0.2)
        return False

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stop()
        self.sender.close()

    # -- judging ---------------------------------------------------------------------------------------
    def send(self, case: Case):  # -> Outcome
        frames = self.framer.frames(case)
        honest = self.framer.honest(case)
        return self.sender.send_case(frames, self.probe if self.in_band and honest else None), frames

    def judge(self, why: str) -> Verdict:
        """The target failed a probe (or died): say how."""
        if self.proc is not None:
            rc = self.proc.poll()
            if rc is None:
                rc = self.proc.wait_exit(1.5)
            if rc is not None:
                what, sig = describe_status(rc)
                return Verdict(True, "crash" if sig is not None else "exit", f"target {what}", sig)
            return Verdict(True, "hang", f"target process alive but {why}")
        kind = "refused" if "refused" in why else "reset" if "reset" in why else "no reply"
        return Verdict(True, kind, why)

    def run_case(self, case: Case) -> Verdict:
        """Send one case to a live target and say whether it went down."""
        self.sender.recorder.clear()
        out, _ = self.send(case)
        if out.answered:
            return Verdict(False, events=self.sender.recorder.take())
        if self.proc is not None and self.proc.poll() is not None:
            v = self.judge("process gone")
        else:
            ok, why = self.alive(retries=2)
            v = Verdict(False) if ok else self.judge(why)
        v.events = self.sender.recorder.take()
        return v

    def kills(self, case: Case, like: Verdict | None = None, death_wait: float = 10.0) -> bool:
        """Does ``case`` take a live target down — the same way as ``like`` (crash, exit) if given?

        A target we started that stops answering is given ``death_wait`` seconds to die before it
        counts as a hang (a busy server is not a crashed one)."""
        if not self.ensure_up():
            raise RuntimeError("target did not come back")
        v = self.run_case(case)
        if v.killed and self.proc is not None and v.kind == "hang":
            rc = self.proc.wait_exit(death_wait)
            if rc is None:
                self.proc.stop()
            else:
                what, sig = describe_status(rc)
                v = Verdict(True, "crash" if sig is not None else "exit", f"target {what}", sig)
        if not v.killed:
            return False
        if like is not None and like.kind in ("crash", "exit"):
            return v.kind == like.kind and v.signal == like.signal
        return True


def _log_default(s: str) -> None:
    print(s, file=sys.stderr, flush=True)


def run_fuzz(opts: FuzzOptions, log: Callable[[str], None] = _log_default) -> FuzzSummary:
    out_dir = Path(opts.out)
    h = Harness(opts.target, opts.framing, opts.dialect, cmd=opts.cmd, allow_remote=opts.allow_remote,
                timeout=opts.timeout, reply_timeout=opts.reply_timeout, probe_value=opts.probe_value,
                expect_reply=opts.expect_reply, ready_timeout=opts.ready_timeout,
                log_path=out_dir / "target.log", log=log)
    summary = FuzzSummary(str(h.target), h.dialect, h.framing, opts.seed)
    gen = CaseGenerator(h.dialect, opts.seed, framing=h.framing, seed_values=opts.seed_values,
                        conversations=opts.conversations, weights=opts.weights)
    # tcp with replies: the in-band probe checks every case; without: each case's connect does
    probe_every = opts.probe_every or (1 if h.in_band else 50 if h.target.scheme == "tcp" else 100)
    started = time.monotonic()
    try:
        if h.proc is not None:
            h.start()
            log(f"target started: {h.proc.cmd} (pid {h.proc.pid})")
        elif not h.alive()[0]:
            raise RuntimeError(f"{h.target} does not answer the known-good probe before fuzzing "
                               f"({'a reply' if h.expect_reply else 'a connection'} was expected)")
        h.sender.recorder.clear()
        window: list[Case] = []
        deadline = started + opts.duration
        i = opts.start_index
        end = opts.start_index + opts.count
        sender = h.sender
        gen_case = gen.case
        rate = opts.rate
        summary.stopped = f"count {opts.count} reached"
        while i < end:
            now = time.monotonic()
            if now >= deadline:
                summary.stopped = f"duration {opts.duration:g} s reached"
                break
            if rate:
                due = started + (i - opts.start_index) / rate
                if due > now:
                    time.sleep(due - now)
            case = gen_case(i)
            i += 1
            out, frames = h.send(case)
            summary.cases += 1
            summary.packets += len(frames)
            summary.bytes += sum(map(len, frames))
            summary.strategies[case.strategy] += 1
            if out.answered:
                sender.recorder.clear()
                window.clear()
                continue
            window.append(case)
            died = h.proc is not None and h.proc.poll() is not None
            if not died and not out.suspicious and len(window) < probe_every:
                continue
            summary.probes += 1
            ok, why = (False, "process gone") if died else h.alive()
            if ok:
                sender.recorder.clear()
                window.clear()
                continue
            verdict = h.judge(why if not out.error else f"{out.error}; then {why}")
            verdict.events = sender.recorder.take()
            elapsed = time.monotonic() - started
            finding = _handle_finding(h, opts, summary, window, verdict, log, elapsed)
            summary.handling += time.monotonic() - started - elapsed
            summary.findings.append(finding)
            log(finding.line())
            window.clear()
            if not opts.keep_going or len(summary.findings) >= opts.max_findings:
                summary.stopped = "finding" if not opts.keep_going else f"{opts.max_findings} findings"
                break
            if not h.ensure_up():
                summary.stopped = "target did not come back after a finding"
                break
            sender.recorder.clear()
    finally:
        summary.seconds = time.monotonic() - started
        summary.target_starts = h.proc.starts if h.proc is not None else 0
        h.stop()
    return summary


def _info(h: Harness, opts: FuzzOptions, verdict: Verdict, folder: Path) -> dict[str, Any]:
    return {"dialect": h.dialect, "framing": h.framing, "target": str(h.target), "seed": opts.seed,
            "kind": verdict.kind, "detail": verdict.detail, "signal": verdict.signal,
            "probe": {"value_hex": encode(h.probe_value, h.dialect).hex(), "expect_reply": h.expect_reply,
                      "timeout": h.timeout},
            "cmd": h.proc.cmd if h.proc is not None else None, "seed_sources": opts.seed_sources,
            "replay": replay_command(folder, str(h.target), h.framing, h.dialect, opts.cmd)}


def replay_command(folder: Path, target: str, framing: str, dialect: str, cmd: str | None) -> str:
    """The shell command that sends a finding again (starting the target with ``cmd`` when the run did)."""
    words = ["godot-dissect", "replay", str(folder), "--target", target, "--framing", framing, "--dialect", dialect]
    if cmd:
        words += ["--cmd", cmd]
    return shlex.join(words)


def exchange_comment(h: Harness, case: Case, what: str) -> dict[str, object]:
    """The pcapng comment of a finding's exchange: enough for ``read`` to open it with no options."""
    return {"dialect": h.dialect, "framing": h.framing, "target": str(h.target),
            "case": f"{case.index} ({case.strategy}: {case.name[:120]})", "what": what}


def _handle_finding(h: Harness, opts: FuzzOptions, summary: FuzzSummary, window: list[Case], verdict: Verdict,
                    log: Callable[[str], None], elapsed: float) -> Finding:
    number = len(summary.findings) + 1
    folder = Path(opts.out) / f"finding-{number:03d}-{verdict.kind.replace(' ', '-')}"
    log(f"finding #{number}: {verdict.kind}: {verdict.detail} after case {window[-1].index} "
        f"({len(window)} case(s) since the last good probe)")
    cases = list(window)
    confirmed = False
    culprit = window[-1]
    minimised: MinimiseResult | None = None
    confirm_events: list[Event] = []
    if h.proc is not None:
        # which case kills a fresh target alone? the last one first
        try:
            for c in reversed(window):
                h.ensure_up()
                v = h.run_case(c)
                if v.killed:
                    culprit, cases, confirmed, confirm_events = c, [c], True, v.events
                    verdict = Verdict(True, v.kind, v.detail, v.signal, verdict.events)
                    break
            if not confirmed and len(window) > 1:
                h.ensure_up()
                for c in window[:-1]:
                    h.send(c)
                v = h.run_case(window[-1])
                confirmed = v.killed
            if confirmed and opts.minimise and len(cases) == 1:
                log(f"  minimising case {culprit.index} ({len(culprit.payload)} bytes)")
                m = Minimiser(h.dialect, lambda c: h.kills(c, verdict), opts.minimise_runs, opts.minimise_seconds,
                              log)
                minimised = m.run(culprit)
                log(f"  minimised to {len(minimised.case.payload)} bytes in {minimised.runs} target runs "
                    f"({minimised.seconds:.1f} s){'' if minimised.verified else ', not verified'}")
                if minimised.verified:
                    h.ensure_up()
                    v = h.run_case(minimised.case)
                    confirm_events = v.events if v.killed else confirm_events
        except RuntimeError as e:
            log(f"  could not confirm: {e}")
    final = minimised.case if minimised is not None and minimised.verified else culprit
    info = _info(h, opts, verdict, folder)
    info.update(confirmed=confirmed, sequence=len(cases), elapsed=round(elapsed, 3), cases_before=summary.cases,
                minimised=minimised.to_json() if minimised is not None else None)
    save_cases = [*cases[:-1], final] if cases[-1] is culprit else cases
    reproducer.save(folder, info, save_cases, original=culprit if final is not culprit else None)
    if verdict.events:
        write_exchange(folder / "exchange.pcapng", verdict.events, h.target,
                       exchange_comment(h, culprit, "the exchange from the last good probe to the finding"))
    if confirm_events:
        name = "minimised" if minimised is not None else "confirmed"
        write_exchange(folder / f"{name}.pcapng", confirm_events, h.target,
                       exchange_comment(h, final, f"the {name} case killing a fresh target"))
    if h.proc is not None:
        (folder / "target.log").write_text(h.proc.log_tail(200) + "\n", encoding="utf-8")
    return Finding(number, verdict.kind, verdict.detail, final, confirmed, folder, verdict.signal, len(cases),
                   minimised, elapsed, summary.cases, info["replay"])


# -- replay -------------------------------------------------------------------------------------------------

@dataclass
class ReplayResult:
    killed: bool
    kind: str
    detail: str
    cases: int
    signal: int | None = None
    at_case: int | None = None

    def text(self) -> str:
        if self.killed:
            return f"target went down: {self.kind}: {self.detail} (after case {self.at_case} of {self.cases})"
        return f"target survived all {self.cases} case(s)"


def replay(path: str | Path, target_url: str | None = None, *, framing: str | None = None, dialect: str | None = None,
           cmd: str | None = None, allow_remote: bool = False, timeout: float = 2.0, ready_timeout: float = 20.0,
           pcap: str | Path | None = None, log: Callable[[str], None] = _log_default) -> ReplayResult:
    """Send a reproducer's cases again, in order, checking the target after each (``target_url`` None:
    the target the finding was made on)."""
    rep = reproducer.load(path)
    target_url = target_url or rep.info.get("target")
    if not target_url:
        raise ValueError(f"{path}: the reproducer records no target: give --target URL")
    framing = framing or rep.info.get("framing")
    dialect = dialect or rep.info.get("dialect") or "godot4"
    probe_info = rep.info.get("probe") or {}
    h = Harness(target_url, framing, dialect, cmd=cmd, allow_remote=allow_remote, timeout=timeout,
                expect_reply=probe_info.get("expect_reply"), ready_timeout=ready_timeout,
                log_path=Path(rep.path) / "replay-target.log" if cmd else None, log=log)
    events: list[Event] = []
    try:
        if h.proc is not None:
            h.start()
        elif not h.alive()[0]:
            raise RuntimeError(f"{h.target} does not answer the known-good probe before the replay")
        for k, c in enumerate(rep.cases, 1):
            v = h.run_case(c)
            events += v.events
            log(f"case {k}/{len(rep.cases)}: {len(c.payload)} bytes ({c.strategy}: {c.name[:80]}): "
                f"{v.kind + ': ' + v.detail if v.killed else 'target alive'}")
            if v.killed:
                return ReplayResult(True, v.kind, v.detail, len(rep.cases), v.signal, k)
        return ReplayResult(False, "", "", len(rep.cases))
    finally:
        if pcap is not None and events:
            last = rep.cases[-1]
            write_exchange(pcap, events, h.target, exchange_comment(h, last, "a replay of " + str(rep.path)))
        h.stop()
