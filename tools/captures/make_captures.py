#!/usr/bin/env python3
"""Make the real-engine captures in ``captures/``: pcapng files plus goldens printed by the engines.

    python tools/captures/make_captures.py [--only NAME ...] [--out captures/]
    python tools/captures/make_captures.py --load 25000 --load-out /tmp/load.pcapng

Every capture runs real Godot 3.2.3 processes (``godot3-server``) on 127.0.0.1 while ``tshark``
records the loopback interface.  The golden ``NAME.golden.jsonl`` holds one JSON object per
Variant message, in the order the receivers printed them; text, type and hex come from the
engines' own prints (``var2str``, ``typeof``, ``var2bytes``), never from godot_dissect's decoder.
See ``captures/README.md`` for the format and for how each golden was obtained.

Before a capture is written it is checked against the pcap with tshark alone (no godot_dissect
code): every golden message's bytes must be found, in order, in the flow it names.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PROJECT = HERE / "godot3"
DEFAULT_OUT = ROOT / "captures"

UDP_SERVER_PORT = 4242
UDP_CLIENT_PORT = 4243
TCP_PORT = 4244
DEBUG_PORT = 6007  # the Godot editor's default remote-debug port (also X11 display 7 to Wireshark)
LOAD_UDP_SERVER_PORT = 4252
LOAD_UDP_CLIENT_PORT = 4253
LOAD_TCP_PORT = 4254

sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))
from common import CaptureError, padding_only_diff, tshark_capture  # noqa: E402

from godot_dissect.spec import get_dialect  # noqa: E402

#: Godot 3.x Variant::Type names in id order (typeof() values), from the spec
TYPE_NAMES_3 = [e.name for e in get_dialect("godot3").entries]
TYPE_OBJECT = get_dialect("godot3").by_key("OBJECT").id  # type: ignore[union-attr]

DESCRIPTIONS = {
    "godot3-udp-all-types": (
        "Godot 3.2.3 PacketPeerUDP: a client (bound to 127.0.0.1:4243) put_var()s one datagram per value "
        "to a server on 127.0.0.1:4242 that get_var()s and prints each; every Godot 3 Variant type "
        "(int64, float64/NaN/inf, unicode, all math types, NodePaths, RID, Object as id, nested "
        "containers, every Pool*Array) plus game-state-like dictionaries, then \"__end__\". The server "
        "replies twice (after the first datagram and after \"__end__\"), so both directions exist."),
    "godot3-tcp-stream": (
        "Godot 3.2.3 TCP on 127.0.0.1:4244, two connections from one client process. Connection a: "
        "StreamPeerTCP.put_var() (u32 LE length + Variant), read by the server with "
        "StreamPeerTCP.get_var(): every type (paced), a 100000-byte PoolByteArray and a 1500-element "
        "Array (both span several segments), then a back-to-back burst of small values. Connection b: "
        "PacketPeerStream.put_var() (byte-identical framing), read with PacketPeerStream.get_var(): a "
        "burst of 30 small dictionaries sharing segments and 3 game states. One reply per connection "
        "from the server. TCP_NODELAY left at the engine default (off)."),
    "godot3-debugger": (
        "Godot 3.2.3 remote debugger: a small game (tools/captures/godot3/debug_game.tscn) run with "
        "--remote-debug 127.0.0.1:6007 against a stand-in editor in Python "
        "(tools/captures/debug_editor.py). Game->editor: every put_var is its own [u32 len][Variant] PDU "
        "and a message is name String + argument count int + N argument PDUs (output, error, "
        "message:scene_tree, message:video_mem, message:inspect_object, performance, profile_sig, "
        "profile_frame, profile_total, network_profile, network_bandwidth, debug_enter, stack_dump, "
        "stack_frame_vars, debug_exit). Editor->game: one Array PDU per command (breakpoint, "
        "request_scene_tree, request_video_mem, inspect_object, start/stop_profiling, "
        "start/stop_network_profiling, get_stack_dump, get_stack_frame_vars, continue, "
        "set_object_property, set_skip_breakpoints). The game quits by itself after ~5 s."),
}


# --------------------------------------------------------------------------------------------------
# processes: godot3-server and tshark


@dataclass
class Proc:
    name: str
    popen: subprocess.Popen
    out_path: Path
    err_path: Path

    def wait(self, timeout: float) -> int:
        try:
            return self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.popen.kill()  # our own child, by its handle
            self.popen.wait()
            raise CaptureError(f"{self.name}: did not finish within {timeout:.0f} s (killed)") from None

    def stdout(self) -> str:
        return self.out_path.read_text(encoding="utf-8", errors="replace")

    def stderr(self) -> str:
        return self.err_path.read_text(encoding="utf-8", errors="replace")


class Workspace:
    """A temp dir with a copy of the GDScript project and one HOME per engine process."""

    def __init__(self, godot: str, keep: bool) -> None:
        self.godot = godot
        self.keep = keep
        self.dir = Path(tempfile.mkdtemp(prefix="gdx-captures-"))
        self.project = self.dir / "project"
        shutil.copytree(PROJECT, self.project)
        self.procs: list[Proc] = []

    def close(self) -> None:
        for p in self.procs:
            if p.popen.poll() is None:
                p.popen.kill()
                p.popen.wait()
        if self.keep:
            print(f"  (work dir kept: {self.dir})", file=sys.stderr)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)

    def start(self, name: str, args: list[str], env: dict[str, str] | None = None) -> Proc:
        home = self.dir / f"home-{name}"
        # Pre-create user:// and its logs dir: otherwise 3.2.3 prints a make_dir_recursive error
        # (which the debugger would also forward as an "error" message).
        (home / ".local/share/godot/app_userdata/godot-dissect-captures/logs").mkdir(parents=True, exist_ok=True)
        full_env = dict(os.environ, HOME=str(home), LANG="en_US.UTF-8", **(env or {}))
        full_env.pop("LC_ALL", None)
        out_path, err_path = self.dir / f"{name}.out", self.dir / f"{name}.err"
        popen = subprocess.Popen([self.godot, "--path", str(self.project), *args], stdin=subprocess.DEVNULL,
                                 stdout=out_path.open("wb"), stderr=err_path.open("wb"), env=full_env,
                                 cwd=self.dir)
        p = Proc(name, popen, out_path, err_path)
        self.procs.append(p)
        return p

    def script(self, name: str, script: str, env: dict[str, str] | None = None) -> Proc:
        return self.start(name, ["-s", f"res://{script}"], env)


def port_free(proto: int, port: int) -> bool:
    s = socket.socket(socket.AF_INET, proto)
    if proto == socket.SOCK_STREAM:  # as TCP_Server does; a port in TIME_WAIT is fine
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def require_ports(*ports: tuple[int, int]) -> None:
    busy = [f"{'udp' if p == socket.SOCK_DGRAM else 'tcp'}/{n}" for p, n in ports if not port_free(p, n)]
    if busy:
        raise CaptureError("ports in use on 127.0.0.1: " + ", ".join(busy))


# --------------------------------------------------------------------------------------------------
# what the engines print (see tools/captures/godot3/report.gd)

BENIGN_STDERR = (
    re.compile(r"^ERROR: (get_language_code|set_locale): "),
    re.compile(r"^\s+At: core/translation\.cpp:"),
)


def cap_lines(text: str) -> list[list[str]]:
    return [ln.split("\t")[1:] for ln in text.splitlines() if ln.startswith("@@CAP\t")]


def engine_problems(p: Proc, allowed: tuple[str, ...] = ()) -> list[str]:
    bad = []
    lines = [ln for ln in p.stderr().splitlines() if not ln.startswith("@@CAP")]
    for i, ln in enumerate(lines):
        if not ln.strip() or any(r.search(ln) for r in BENIGN_STDERR):
            continue
        if ln.lstrip().startswith("At: ") and i and any(a in lines[i - 1] for a in allowed):
            continue
        if any(a in ln for a in allowed):
            continue
        bad.append(ln)
    for f in cap_lines(p.stderr()):
        if f and f[0] == "FATAL":
            bad.append("FATAL " + " ".join(f[1:]))
    return bad


def check_engine(p: Proc, allowed: tuple[str, ...] = ()) -> None:
    bad = engine_problems(p, allowed)
    if bad:
        raise CaptureError(f"{p.name} reported problems:\n  " + "\n  ".join(bad[:30]))
    if not any(f == ["DONE"] for f in cap_lines(p.stderr())) and not allowed:
        raise CaptureError(f"{p.name} did not finish its script (no DONE line)")


def parse_fields(f: list[str]) -> dict[str, Any]:
    """``<typeof> full <text hex> <bytes hex> <oid>`` or ``<typeof> big <size> <sha> <tsize> <tsha> <head> <oid>``."""
    t = int(f[0])
    out: dict[str, Any] = {"type": t, "type_name": TYPE_NAMES_3[t] if 0 <= t < len(TYPE_NAMES_3) else str(t)}
    if f[1] == "full":
        out["text"] = bytes.fromhex(f[2]).decode("utf-8")
        out["hex"] = f[3].lower()
        oid = f[4]
    elif f[1] == "big":
        out["size"] = int(f[2])
        out["hex_sha256"] = f[3].lower()
        out["text_size"] = int(f[4])
        out["text_sha256"] = f[5].lower()
        out["text_head"] = bytes.fromhex(f[6]).decode("utf-8", errors="replace")
        oid = f[7]
    else:
        raise CaptureError(f"bad field kind {f[1]!r}")
    if oid != "-":
        out["object_id"] = int(oid)
    return out


@dataclass
class Event:
    kind: str  # SENT / RECV
    transport: str
    index: int
    fields: dict[str, Any]
    label: str = ""
    src: tuple[str, int] | None = None
    dst: tuple[str, int] | None = None
    msec: int = 0
    proc: int = 0


def events(p: Proc, proc_no: int) -> list[Event]:
    evs = []
    for f in cap_lines(p.stderr()):
        if f[0] == "SENT":
            evs.append(Event("SENT", f[1], int(f[2]), parse_fields(f[4:]), label=bytes.fromhex(f[3]).decode(),
                             proc=proc_no))
        elif f[0] == "RECV":
            evs.append(Event("RECV", f[1], int(f[6]), parse_fields(f[8:]), src=(f[2], int(f[3])),
                             dst=(f[4], int(f[5])), msec=int(f[7]), proc=proc_no))
    return evs


def flow_name(proto: str, src: tuple[str, int], dst: tuple[str, int]) -> str:
    return f"{proto} {src[0]}:{src[1]} -> {dst[0]}:{dst[1]}"


def golden_records(sent: list[Event], recv: list[Event], proto: str, api: dict[str, str]) -> list[dict[str, Any]]:
    """Join what senders printed with what receivers printed, message by message.

    ``hex`` is filled in later from the pcap (:func:`attach_wire`); ``_sent``/``_recv`` are the
    engines' var2bytes prints, kept until then.
    """
    by_key = {(e.transport, e.index): e for e in sent}
    if len(by_key) != len(sent):
        raise CaptureError("duplicate SENT lines")
    recs = []
    seen = set()
    order = sorted(recv, key=lambda e: (e.msec, e.proc, e.index))
    for seq, r in enumerate(order):
        key = (r.transport, r.index)
        s = by_key.get(key)
        if s is None:
            raise CaptureError(f"received {key} that no sender printed")
        seen.add(key)
        rf, sf = r.fields, s.fields
        if rf["type"] != sf["type"]:
            raise CaptureError(f"{key}: sent typeof {sf['type']} but received {rf['type']}")
        assert r.src is not None and r.dst is not None
        rec: dict[str, Any] = {
            "seq": seq, "flow": flow_name(proto, r.src, r.dst), "index": r.index, "api": api[r.transport],
            "label": s.label, "type": rf["type"], "type_name": rf["type_name"],
        }
        if "text" in rf:
            rec["text"] = rf["text"]
            if rf["type"] == TYPE_OBJECT:
                rec["object_id"] = rf.get("object_id")
                rec["sent_object_id"] = sf.get("object_id")
                rec["sent_text"] = sf["text"]
            rec["_sent"], rec["_recv"] = sf["hex"], rf["hex"]
        else:
            for k in ("size", "hex_sha256", "text_size", "text_sha256", "text_head"):
                rec[k] = rf[k]
            if (rf["size"], rf["hex_sha256"]) != (sf["size"], sf["hex_sha256"]):
                raise CaptureError(f"{key}: big value differs between sender and receiver")
        recs.append(rec)
    missing = sorted(set(by_key) - seen)
    if missing:
        raise CaptureError(f"sent but never received: {missing[:10]}")
    return recs


# --------------------------------------------------------------------------------------------------
# cross-checks against the pcap, with tshark only


def tshark_fields(tshark: str, pcap: Path, fields: list[str], display_filter: str) -> list[list[str]]:
    cmd = [tshark, "-r", str(pcap), "-Y", display_filter, "-T", "fields", "-E", "separator=\t",
           "-o", "tcp.desegment_tcp_streams:FALSE", "-o", "tcp.relative_sequence_numbers:TRUE"]
    for f in fields:
        cmd += ["-e", f]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if res.returncode != 0:
        raise CaptureError("tshark -r failed: " + res.stderr)
    return [ln.split("\t") for ln in res.stdout.splitlines()]


def pcap_udp_flows(tshark: str, pcap: Path) -> dict[str, list[bytes]]:
    flows: dict[str, list[bytes]] = {}
    for src, sport, dst, dport, payload in tshark_fields(
            tshark, pcap, ["ip.src", "udp.srcport", "ip.dst", "udp.dstport", "udp.payload"], "udp"):
        flows.setdefault(flow_name("udp", (src, int(sport)), (dst, int(dport))), []).append(bytes.fromhex(payload))
    return flows


@dataclass
class TcpDir:
    segments: list[bytes] = field(default_factory=list)

    @property
    def data(self) -> bytes:
        return b"".join(self.segments)


def pcap_tcp_flows(tshark: str, pcap: Path) -> dict[str, TcpDir]:
    """Payload segments per TCP direction, in sequence order (loopback: no loss or reordering)."""
    per: dict[str, dict[int, bytes]] = {}
    for src, sport, dst, dport, seq, payload in tshark_fields(
            tshark, pcap, ["ip.src", "tcp.srcport", "ip.dst", "tcp.dstport", "tcp.seq", "tcp.payload"],
            "tcp.len > 0"):
        d = per.setdefault(flow_name("tcp", (src, int(sport)), (dst, int(dport))), {})
        d.setdefault(int(seq), bytes.fromhex(payload))
    out = {}
    for k, d in per.items():
        td = TcpDir()
        pos = None
        for seq in sorted(d):
            if pos is not None and seq != pos:
                raise CaptureError(f"{k}: gap or overlap in the TCP stream at relative seq {seq} (expected {pos})")
            td.segments.append(d[seq])
            pos = seq + len(d[seq])
        out[k] = td
    return out


def frames(data: bytes) -> list[bytes]:
    out, pos = [], 0
    while pos + 4 <= len(data):
        (n,) = struct.unpack_from("<I", data, pos)
        out.append(data[pos + 4:pos + 4 + n])
        pos += 4 + n
    if pos != len(data):
        raise CaptureError(f"stream does not end on a frame boundary ({len(data) - pos} bytes left)")
    return out


def check_raw_on_wire(recs: list[dict[str, Any]], wire: dict[str, list[bytes]]) -> None:
    """The debugger's ``hex`` is what the stand-in editor read/wrote; it must be the pcap's bytes."""
    for flow in {r["flow"] for r in recs}:
        rs = sorted((r for r in recs if r["flow"] == flow), key=lambda r: r["index"])
        msgs = wire.get(flow, [])
        if [r["hex"] for r in rs] != [m.hex() for m in msgs]:
            raise CaptureError(f"{flow}: the pcap's PDUs ({len(msgs)}) differ from the editor's ({len(rs)})")


def attach_wire(recs: list[dict[str, Any]], wire: dict[str, list[bytes]]) -> None:
    """Set every record's ``hex`` to the message's bytes as found in the pcap (tshark's payloads,
    split at the u32 length prefixes for TCP), after checking them against the engines' prints."""
    by_flow: dict[str, list[dict[str, Any]]] = {}
    for r in recs:
        by_flow.setdefault(r["flow"], []).append(r)
    for flow, rs in by_flow.items():
        msgs = wire.get(flow)
        if msgs is None:
            raise CaptureError(f"flow {flow} not in the pcap (have: {sorted(wire)})")
        rs = sorted(rs, key=lambda r: r["index"])
        if [r["index"] for r in rs] != list(range(len(rs))):
            raise CaptureError(f"{flow}: indexes are not 0..n-1")
        if len(msgs) != len(rs):
            raise CaptureError(f"{flow}: golden has {len(rs)} messages, the pcap {len(msgs)}")
        for r, m in zip(rs, msgs, strict=True):
            where = f"{flow} #{r['index']}"
            if "size" in r:  # big value: the engine printed a digest
                if r["size"] != len(m) or r["hex_sha256"] != hashlib.sha256(m).hexdigest():
                    raise CaptureError(f"{where}: pcap bytes differ from the engine's digest")
                continue
            w = m.hex()
            sent, got = r.pop("_sent"), r.pop("_recv", None)
            if w != sent:
                if not padding_only_diff(w, sent, r["text"]):
                    raise CaptureError(f"{where}: pcap {w[:80]} differs from the sender's var2bytes {sent[:80]}")
                r["sender_hex"] = sent
            if got is not None and got != w:
                if not (r["type"] == TYPE_OBJECT or padding_only_diff(w, got, r["text"])):
                    raise CaptureError(f"{where}: receiver re-encodes {got[:80]}, pcap has {w[:80]}")
                r["recv_hex"] = got
            r["hex"] = w
            # keep a stable key order: hex right after text
            for k in ("sender_hex", "recv_hex", "object_id", "sent_object_id", "sent_text"):
                if k in r:
                    r[k] = r.pop(k)


def segment_stats(td: TcpDir) -> dict[str, int]:
    """How the engine's writes were cut into segments (for the README and the manifest)."""
    segs = []  # (start, end) stream offsets of each segment
    acc = 0
    for s in td.segments:
        segs.append((acc, acc + len(s)))
        acc += len(s)
    data = td.data
    frms = []  # (start, end) of each [u32 length][Variant] frame
    pos = 0
    while pos + 4 <= len(data):
        (n,) = struct.unpack_from("<I", data, pos)
        frms.append((pos, pos + 4 + n))
        pos += 4 + n
    starts = {a for a, _ in frms}
    return {
        "segments": len(segs), "frames": len(frms), "bytes": len(data),
        "largest_segment": max((b - a for a, b in segs), default=0),
        "segments_with_only_a_length_prefix": sum(1 for a, b in segs if b - a == 4 and a in starts),
        "segments_with_2plus_frame_starts": sum(1 for a, b in segs if sum(1 for f in starts if a <= f < b) >= 2),
        "frames_split_across_segments": sum(1 for fa, fb in frms if any(a < fb and b > fa and not (a <= fa and fb <= b)
                                                                          for a, b in segs)),
        "frames_over_3plus_segments": sum(1 for fa, fb in frms if sum(1 for a, b in segs if a < fb and b > fa) >= 3),
    }


def pcap_packets(tshark: str, pcap: Path) -> int:
    return len(tshark_fields(tshark, pcap, ["frame.number"], "frame"))


# --------------------------------------------------------------------------------------------------
# writing


def write_golden(path: Path, recs: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for r in recs:
            f.write(json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n")


def update_manifest(out: Path, name: str, entry: dict[str, Any]) -> None:
    path = out / "manifest.json"
    data: dict[str, Any] = {}
    if path.exists():
        data = json.loads(path.read_text(encoding="utf-8"))
    data[name] = entry
    path.write_text(json.dumps(dict(sorted(data.items())), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def engine_version(godot: str) -> str:
    res = subprocess.run([godot, "--version"], capture_output=True, text=True, timeout=60)
    return res.stdout.strip().splitlines()[-1] if res.stdout.strip() else "unknown"


def flow_summary(recs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for r in recs:
        e = out.setdefault(r["flow"], {"flow": r["flow"], "messages": 0})
        e["messages"] += 1
        if "api" in r:
            e["api"] = r["api"]
        if "direction" in r:
            e["direction"] = r["direction"]
    return list(out.values())


@dataclass
class Ctx:
    godot: str
    tshark: str
    out: Path
    keep: bool
    version: str = ""


def add_engine_args(ap: argparse.ArgumentParser) -> None:
    """--godot3, --tshark, --keep-tmp: what every Godot 3 capture driver runs."""
    ap.add_argument("--godot3", default=shutil.which("godot3-server") or "godot3-server")
    ap.add_argument("--tshark", default=shutil.which("tshark") or "tshark")
    ap.add_argument("--keep-tmp", action="store_true", help="keep the engines' work dirs and logs")


def engine_ctx(args: argparse.Namespace) -> Ctx | None:
    """The context for ``add_engine_args``' options, its output directory made; None (said on stderr)
    when the engine or tshark is missing."""
    ctx = Ctx(args.godot3, args.tshark, args.out.resolve(), args.keep_tmp)
    for tool in (ctx.godot, ctx.tshark):
        if not shutil.which(tool):
            print(f"missing {tool} (apt-get install -y godot3-server tshark)", file=sys.stderr)
            return None
    ctx.version = engine_version(ctx.godot)
    ctx.out.mkdir(parents=True, exist_ok=True)
    return ctx


# --------------------------------------------------------------------------------------------------
# 1. godot3-udp-all-types


def make_udp(ctx: Ctx, name: str) -> dict[str, Any]:
    require_ports((socket.SOCK_DGRAM, UDP_SERVER_PORT), (socket.SOCK_DGRAM, UDP_CLIENT_PORT))
    pcap = ctx.out / f"{name}.pcapng"
    env = {"GDX_UDP_SERVER_PORT": str(UDP_SERVER_PORT), "GDX_UDP_CLIENT_PORT": str(UDP_CLIENT_PORT)}
    ws = Workspace(ctx.godot, ctx.keep)
    try:
        with tshark_capture(ctx.tshark, f"udp port {UDP_SERVER_PORT}", pcap):
            server = ws.script("udp-server", "udp_server.gd", env)
            wait_ready(server, 30)
            client = ws.script("udp-client", "udp_client.gd", env)
            client.wait(60)
            server.wait(30)
        check_engine(server)
        check_engine(client)
        sent = events(client, 1) + events(server, 0)
        recv = [e for e in sent if e.kind == "RECV"]
        sent = [e for e in sent if e.kind == "SENT"]
        api = {"udp": "PacketPeerUDP.put_var -> PacketPeerUDP.get_var",
               "udp-reply": "PacketPeerUDP.put_var -> PacketPeerUDP.get_var (server reply)"}
        recs = golden_records(sent, recv, "udp", api)
    finally:
        ws.close()
    attach_wire(recs, pcap_udp_flows(ctx.tshark, pcap))
    write_golden(ctx.out / f"{name}.golden.jsonl", recs)
    return {"messages": len(recs), "flows": flow_summary(recs)}


def wait_ready(p: Proc, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(f and f[0] == "READY" for f in cap_lines(p.stderr())):
            return
        if p.popen.poll() is not None:
            raise CaptureError(f"{p.name} exited before it was ready:\n{p.stderr()[-2000:]}")
        time.sleep(0.05)
    raise CaptureError(f"{p.name} not ready after {timeout} s")


# --------------------------------------------------------------------------------------------------
# 2. godot3-tcp-stream


def make_tcp(ctx: Ctx, name: str) -> dict[str, Any]:
    require_ports((socket.SOCK_STREAM, TCP_PORT))
    pcap = ctx.out / f"{name}.pcapng"
    env = {"GDX_TCP_PORT": str(TCP_PORT)}
    ws = Workspace(ctx.godot, ctx.keep)
    try:
        with tshark_capture(ctx.tshark, f"tcp port {TCP_PORT}", pcap):
            server = ws.script("tcp-server", "tcp_server.gd", env)
            wait_ready(server, 30)
            client = ws.script("tcp-client", "tcp_client.gd", env)
            client.wait(90)
            server.wait(30)
        check_engine(server)
        check_engine(client)
        conns = {f[1]: (f[2], int(f[3])) for f in cap_lines(server.stderr()) if f[0] == "CONN"}
        if set(conns) != {"a", "b"}:
            raise CaptureError(f"server saw connections {conns}")
        evs = events(server, 0) + events(client, 1)
        for e in evs:
            if e.kind == "RECV" and e.dst is not None and e.dst[1] == -1:  # client side: fill in its port
                e.dst = conns[e.transport.split("-")[1]]
        sent = [e for e in evs if e.kind == "SENT"]
        recv = [e for e in evs if e.kind == "RECV"]
        api = {"tcp-a": "StreamPeerTCP.put_var -> StreamPeerTCP.get_var",
               "tcp-b": "PacketPeerStream.put_var -> PacketPeerStream.get_var",
               "tcp-a-reply": "StreamPeerTCP.put_var -> StreamPeerTCP.get_var (server reply)",
               "tcp-b-reply": "PacketPeerStream.put_var -> PacketPeerStream.get_var (server reply)"}
        recs = golden_records(sent, recv, "tcp", api)
    finally:
        ws.close()
    wire = pcap_tcp_flows(ctx.tshark, pcap)
    attach_wire(recs, {k: frames(v.data) for k, v in wire.items()})
    write_golden(ctx.out / f"{name}.golden.jsonl", recs)
    return {"messages": len(recs), "flows": flow_summary(recs),
            "tcp_segmenting": {k: segment_stats(v) for k, v in sorted(wire.items())}}


# --------------------------------------------------------------------------------------------------
# 3. godot3-debugger


def breakpoint_line() -> int:
    for i, ln in enumerate((PROJECT / "debug_game.gd").read_text(encoding="utf-8").splitlines(), 1):
        if ln.rstrip().endswith("# BREAKPOINT-HERE") and not ln.lstrip().startswith("#"):
            return i
    raise CaptureError("no BREAKPOINT-HERE line in debug_game.gd")


def engine_decode(ws: Workspace, bodies: list[bytes]) -> list[dict[str, Any] | None]:
    blob = bytearray(struct.pack("<I", len(bodies)))
    for b in bodies:
        blob += struct.pack("<I", len(b)) + b
    (ws.project / "pdus.bin").write_bytes(bytes(blob))
    p = ws.script("decode", "decode_pdus.gd")
    p.wait(120)
    check_engine(p)
    res: list[dict[str, Any] | None] = [None] * len(bodies)
    for f in cap_lines(p.stderr()):
        if f[0] == "DEC":
            res[int(f[1])] = None if f[2] == "reject" else parse_fields(f[2:])
    return res


def make_debugger(ctx: Ctx, name: str) -> dict[str, Any]:
    from debug_editor import StandInEditor

    require_ports((socket.SOCK_STREAM, DEBUG_PORT))
    pcap = ctx.out / f"{name}.pcapng"
    ws = Workspace(ctx.godot, ctx.keep)
    try:
        with tshark_capture(ctx.tshark, f"tcp port {DEBUG_PORT}", pcap):
            editor = StandInEditor(DEBUG_PORT, breakpoint_line(), deadline=15.0)
            game = ws.start("debug-game", ["--remote-debug", f"127.0.0.1:{DEBUG_PORT}"])
            try:
                editor.run()
            finally:
                game.wait(30)
        # Expected: the game's own push_warning/push_error, and the headless server's viewport
        # complaint while it sits in the debugger's break loop.
        check_engine(game, allowed=("debug_game warning", "debug_game error", "draw_viewports: "))
        if editor.game_addr is None:
            raise CaptureError("the game never connected")
        decoded = engine_decode(ws, [p.body for p in editor.pdus])
        stdout_lines = [ln for ln in game.stdout().splitlines()]
    finally:
        ws.close()

    game_ep = (editor.game_addr[0], editor.game_addr[1])
    ed_ep = ("127.0.0.1", DEBUG_PORT)
    flows = {"game->editor": flow_name("tcp", game_ep, ed_ep), "editor->game": flow_name("tcp", ed_ep, game_ep)}
    recs = []
    counters = {"game->editor": 0, "editor->game": 0}
    names: dict[int, str] = {}
    for seq, (p, d) in enumerate(zip(editor.pdus, decoded, strict=True)):
        if d is None:
            raise CaptureError(f"the engine rejected PDU {seq} ({p.direction}): {p.body[:32].hex()}")
        if d.get("hex") != p.body.hex() and d["type"] != TYPE_OBJECT:
            raise CaptureError(f"PDU {seq}: engine re-encodes differently: {d.get('hex')} vs {p.body.hex()}")
        if p.direction == "game->editor" and p.part == "name":
            names[p.message_index] = json.loads(d["text"])  # var2str of a plain ASCII String
        msg = names.get(p.message_index) if p.direction == "game->editor" else editor.commands[p.message_index][0]
        rec: dict[str, Any] = {
            "seq": seq, "flow": flows[p.direction], "index": counters[p.direction], "direction": p.direction,
            "message_index": p.message_index, "message": msg, "part": p.part,
        }
        if p.arg is not None:
            rec["arg"] = p.arg
        rec.update({"type": d["type"], "type_name": d["type_name"], "text": d["text"], "hex": p.body.hex()})
        if d["hex"] != p.body.hex():
            rec["recv_hex"] = d["hex"]
        if "object_id" in d:
            rec["object_id"] = d["object_id"]
        rec["t"] = round(p.t, 3)
        counters[p.direction] += 1
        recs.append(rec)

    # The game's print()s: stdout lines must be exactly the texts of the "output" messages.
    out_texts = [m.args[i][0] for m in editor.messages if m.name == "output" for i in range(len(m.args))]
    if out_texts != stdout_lines:
        raise CaptureError(f"output messages {out_texts[:5]}... differ from the game's stdout {stdout_lines[:5]}...")
    (ctx.out / f"{name}.game-stdout.txt").write_text("\n".join(stdout_lines) + "\n", encoding="utf-8")

    wire = pcap_tcp_flows(ctx.tshark, pcap)
    check_raw_on_wire(recs, {k: frames(v.data) for k, v in wire.items()})
    write_golden(ctx.out / f"{name}.golden.jsonl", recs)
    (ctx.out / f"{name}.editor-log.txt").write_text("\n".join(editor.log) + "\n", encoding="utf-8")
    msg_names: dict[str, int] = {}
    for m in editor.messages:
        msg_names[m.name] = msg_names.get(m.name, 0) + 1
    return {"messages": len(recs), "flows": flow_summary(recs),
            "logical_messages": {"game->editor": len(editor.messages), "editor->game": len(editor.commands)},
            "game_messages_by_name": dict(sorted(msg_names.items())),
            "editor_commands": [c[0] for c in editor.commands],
            "tcp_segmenting": {k: segment_stats(v) for k, v in sorted(wire.items())}}


# --------------------------------------------------------------------------------------------------
# 4. load capture on demand (not committed)


def make_load(ctx: Ctx, count: int, path: Path) -> dict[str, Any]:
    require_ports((socket.SOCK_DGRAM, LOAD_UDP_SERVER_PORT), (socket.SOCK_DGRAM, LOAD_UDP_CLIENT_PORT),
                  (socket.SOCK_STREAM, LOAD_TCP_PORT))
    env = {"GDX_UDP_SERVER_PORT": str(LOAD_UDP_SERVER_PORT), "GDX_UDP_CLIENT_PORT": str(LOAD_UDP_CLIENT_PORT),
           "GDX_TCP_PORT": str(LOAD_TCP_PORT), "GDX_LOAD_COUNT": str(count)}
    ws = Workspace(ctx.godot, ctx.keep)
    try:
        bpf = f"udp port {LOAD_UDP_SERVER_PORT} or tcp port {LOAD_TCP_PORT}"
        with tshark_capture(ctx.tshark, bpf, path):
            server = ws.script("load-server", "load_server.gd", env)
            wait_ready(server, 30)
            client = ws.script("load-client", "load_client.gd", env)
            client.wait(600)
            server.wait(60)
        check_engine(server)
        check_engine(client)
        srv = {f[1]: int(f[2]) for f in cap_lines(server.stderr()) if f[0] == "COUNT"}
        cli = {f[1]: int(f[2]) for f in cap_lines(client.stderr()) if f[0] == "COUNT"}
    finally:
        ws.close()
    udp = pcap_udp_flows(ctx.tshark, path)
    tcp = pcap_tcp_flows(ctx.tshark, path)
    n_udp = sum(len(v) for v in udp.values())
    n_tcp = sum(len(frames(v.data)) for v in tcp.values())
    summary = {"pcap": str(path), "bytes": path.stat().st_size, "udp_datagrams": n_udp, "tcp_messages": n_tcp,
               "engine_sent": cli, "engine_received": srv}
    if n_udp != cli.get("udp") or n_tcp != cli.get("tcp"):
        raise CaptureError(f"load capture incomplete: {summary}")
    path.with_name(path.name + ".json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary


# --------------------------------------------------------------------------------------------------

MAKERS: dict[str, Callable[[Ctx, str], dict[str, Any]]] = {
    "godot3-udp-all-types": make_udp,
    "godot3-tcp-stream": make_tcp,
    "godot3-debugger": make_debugger,
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", action="append", choices=sorted(MAKERS), help="make only this capture (repeatable)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory (default: captures/)")
    ap.add_argument("--godot3", default=shutil.which("godot3-server") or "godot3-server")
    ap.add_argument("--tshark", default=shutil.which("tshark") or "tshark")
    ap.add_argument("--keep-tmp", action="store_true", help="keep the engines' work dirs and logs")
    ap.add_argument("--load", type=int, metavar="N",
                    help="instead: make a load capture with N UDP game-state datagrams and a TCP stream")
    ap.add_argument("--load-out", type=Path, help="where --load writes its pcapng (required with --load)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(HERE))
    ctx = Ctx(args.godot3, args.tshark, args.out.resolve(), args.keep_tmp)
    for tool in (ctx.godot, ctx.tshark):
        if not shutil.which(tool):
            print(f"missing {tool} (apt-get install -y godot3-server tshark)", file=sys.stderr)
            return 2
    ctx.version = engine_version(ctx.godot)
    if args.load is not None:
        if args.load_out is None:
            ap.error("--load needs --load-out PATH")
        try:
            summary = make_load(ctx, args.load, args.load_out.resolve())
        except CaptureError as e:
            print(f"load capture FAILED: {e}", file=sys.stderr)
            return 1
        print(json.dumps(summary, indent=2))
        return 0
    ctx.out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name in args.only or list(MAKERS):
        print(f"{name} ...", file=sys.stderr, flush=True)
        t0 = time.monotonic()
        try:
            info = MAKERS[name](ctx, name)
        except CaptureError as e:
            print(f"{name}: FAILED: {e}", file=sys.stderr)
            failed += 1
            continue
        pcap = ctx.out / f"{name}.pcapng"
        entry = {"pcap": pcap.name, "golden": f"{name}.golden.jsonl", "description": DESCRIPTIONS[name],
                 "engine": f"godot3-server {ctx.version}", "pcap_bytes": pcap.stat().st_size,
                 "packets": pcap_packets(ctx.tshark, pcap), **info}
        update_manifest(ctx.out, name, entry)
        print(f"{name}: {entry['messages']} messages, {entry['packets']} packets, {entry['pcap_bytes']} bytes "
              f"({time.monotonic() - t0:.1f} s)", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
