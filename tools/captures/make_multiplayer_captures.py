#!/usr/bin/env python3
"""Make the Godot 3.2.3 high-level multiplayer captures in ``captures/``: pcapng + engine-printed goldens.

    python tools/captures/make_multiplayer_captures.py [--only NAME ...] [--out captures/] [--keep-tmp]

  godot3-enet-multiplayer       NetworkedMultiplayerENet, a server and two clients (UDP 4270, 4271, 4272)
  godot3-websocket-multiplayer  WebSocketServer / WebSocketClient as network peers (TCP 4273)
  godot3-enet-compressed        NetworkedMultiplayerENet with compression_mode set, one server/client pair
                                per mode (range coder, FastLZ, zlib, zstd: UDP 4280/4281 ... 4286/4287)

Three real Godot 3.2.3 processes (``godot3-server``, project tools/captures/godot3_mp/) follow the same
plan (plan.gd) while ``tshark -i lo`` records.  Every sender prints what it sends before each rpc,
rset or send_bytes; every receiver prints, inside the called method or setter, the sender id, its own
node path, the name and each argument (typeof, var2str, var2bytes).  The golden has one line per Godot
multiplayer packet on the wire (a relayed packet once per hop) and takes its content from those
prints.  No engine prints SIMPLIFY_PATH / CONFIRM_PATH: those lines are read from the pcap and say so.

Before a golden is written it is checked against the pcap without godot_dissect's decoders: tshark's
udp.payload with the ENet commands walked here by the spec's command table (godot_dissect.spec.enet,
whose sizes tests/test_enet.py checks against the real libenet) and the fragments joined with struct,
or tshark's tcp.payload with the WebSocket frames unmasked here.  Every packet must be explained by exactly one
print, and every print by a packet.

godot3-enet-compressed is read the same way once its datagrams are decompressed by the codecs the
engine itself runs (tools/captures/engine_codecs.py: libenet's range coder, which Debian's
godot3-server is linked with, and Godot's Compression class through codec.gd), never by godot_dissect.
Each compressed body must compress back to exactly the wire bytes, and each uncompressed one must not
get shorter (ENet keeps the compressed form only when it is).
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import socket
import struct
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PROJECT = HERE / "godot3_mp"
DEFAULT_OUT = ROOT / "captures"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import engine_codecs as ec  # noqa: E402  (the engine's ENet compressors: libenet's range coder, Compression)
import make_captures as mc  # noqa: E402  (Workspace, engine print parsing, tshark helpers)
from common import CaptureError, padding_only_diff, tshark_capture  # noqa: E402

from godot_dissect.spec import enet as enet_spec  # noqa: E402  (command numbers, sizes, fields)
from godot_dissect.spec import multiplayer as mp_spec  # noqa: E402

ENET_PORTS = {"s": 4270, "a": 4271, "b": 4272}  # the clients bind theirs (create_client's client_port)
WS_PORT = 4273
# godot3-enet-compressed: NetworkedMultiplayerENet.compression_mode -> (server UDP port, client UDP port)
COMPRESSED_PAIRS = {
    "COMPRESS_RANGE_CODER": (4280, 4281),
    "COMPRESS_FASTLZ": (4282, 4283),
    "COMPRESS_ZLIB": (4284, 4285),
    "COMPRESS_ZSTD": (4286, 4287),
}
PEER_TIMEOUT = 60.0  # s; the GDScript quits by itself after at most 30 s
BIG = 4096  # as report.gd: larger values are printed as sizes and SHA-256 digests
ROLE_NAMES = {"s": "server", "a": "client a", "b": "client b"}

DESCRIPTIONS = {
    "godot3-enet-multiplayer": (
        "Godot 3.2.3 high-level multiplayer over NetworkedMultiplayerENet: a server (127.0.0.1:4270) and two "
        "clients bound to 127.0.0.1:4271 (a) and 4272 (b), three godot3-server processes following "
        "tools/captures/godot3_mp/plan.gd. rpc, rpc_id, rpc_unreliable, rpc_unreliable_id, rset, rset_id, "
        "rset_unreliable with the remote/remotesync/master/puppet/puppetsync keywords on three nodes "
        "(Main, Main/World/Players/Host, .../Guest); first calls carry the full node path (bit 31 of the "
        "target) after a SIMPLIFY_PATH, later ones the cached id; client-to-client calls relayed by the "
        "server; a negative target; every broad argument kind; a zero-argument call; send_bytes (RAW) "
        "both ways, one of them unreliable-ordered; two 5000-byte PoolByteArray calls (rpc_id and "
        "rpc_unreliable_id) sent as reliable SEND_FRAGMENTs; transfer_channel 2 and 1; channel-0 "
        "ADD_PEER/REMOVE_PEER; clean DISCONNECTs."),
    "godot3-websocket-multiplayer": (
        "Godot 3.2.3 high-level multiplayer over WebSocket: WebSocketServer (127.0.0.1:4273) and two "
        "WebSocketClients used as network peers (gd_mp_api = true), the same plan as "
        "godot3-enet-multiplayer (tools/captures/godot3_mp/plan.gd). Every WebSocket message carries the "
        "9-byte header [u8 type][i32 from][i32 to]; SYS_ID, SYS_ADD and SYS_DEL from the server; "
        "client-to-client messages relayed by the server; RPCs, rsets, path cache, RAW, two 5000-byte "
        "calls; the clients close with code 1000."),
    "godot3-enet-compressed": (
        "Godot 3.2.3 NetworkedMultiplayerENet with compression_mode set on both ends: one server/client pair "
        "per mode, one after the other, COMPRESS_RANGE_CODER (UDP 4280/4281), COMPRESS_FASTLZ (4282/4283), "
        "COMPRESS_ZLIB (4284/4285), COMPRESS_ZSTD (4286/4287), each following plan.gd's compressed_steps: "
        "rpc, rpc_id, rpc_unreliable, rset, rset_id, send_bytes both ways with repeated strings, byte "
        "patterns and a Dictionary, a 2400-byte PoolByteArray over the MTU (2 SEND_FRAGMENTs, each fragment "
        "compressed in its own datagram). Every datagram after its "
        "ENet header is compressed (peer word bit 14) where the engine's codec made it shorter; the golden "
        "comes from the engines' prints after decompressing with the engine's own codecs."),
}


# --------------------------------------------------------------------------------------------------
# the engines' prints (tools/captures/godot3_mp/report.gd)


@dataclass
class Sent:
    role: str
    n: int
    kind: str  # rpc / rset / raw
    node: str  # path from the multiplayer root; "" for raw
    name: str
    target: int
    mode: int  # rpc/rset: 1 = *_unreliable; raw: the transfer mode
    channel: int  # transfer_channel (-1: the transfer mode's channel; websocket: -1)
    args: list[dict[str, Any]] = field(default_factory=list)
    data: bytes | None = None  # raw only


@dataclass
class Received:
    role: str
    n: int
    kind: str
    sender: int  # get_rpc_sender_id() / the network_peer_packet id
    node: str  # the receiving node's get_path()
    node_rel: str  # its path from the multiplayer root (the form on the wire)
    name: str
    args: list[dict[str, Any]] = field(default_factory=list)
    data: bytes | None = None


@dataclass
class PeerLog:
    role: str
    id: int = 0
    sent: list[Sent] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    peer_events: list[tuple[str, int, int]] = field(default_factory=list)  # (connected|disconnected, id, port)
    compression: tuple[str, int] | None = None  # COMPRESSION line: the mode's constant name and value


def _unhex(s: str) -> str:
    return bytes.fromhex(s).decode("utf-8")


def parse_log(role: str, p: mc.Proc) -> PeerLog:
    log = PeerLog(role)
    sent: dict[int, Sent] = {}
    recv: dict[int, Received] = {}
    for f in mc.cap_lines(p.stderr()):
        tag = f[0]
        if tag == "ME":
            log.id = int(f[2])
        elif tag == "PEER":
            log.peer_events.append((f[1], int(f[2]), int(f[4])))
        elif tag == "COMPRESSION":
            log.compression = (f[1], int(f[2]))
        elif tag == "SEND":
            raw = f[2] == "raw"
            s = Sent(role, int(f[1]), f[2], "" if raw else _unhex(f[3]), "" if raw else f[4], int(f[5]), int(f[6]),
                     int(f[7]), data=bytes.fromhex(f[3]) if raw else None)
            sent[s.n] = s
            log.sent.append(s)
        elif tag == "RECV":
            raw = f[2] == "raw"
            r = Received(role, int(f[1]), f[2], int(f[3]), "" if raw else _unhex(f[4]), "" if raw else _unhex(f[5]),
                         "" if raw else f[6], data=bytes.fromhex(f[4]) if raw else None)
            recv[r.n] = r
            log.received.append(r)
        elif tag in ("SARG", "RARG"):
            owner = sent[int(f[1])] if tag == "SARG" else recv[int(f[1])]
            if int(f[2]) != len(owner.args):
                raise CaptureError(f"{role}: {tag} {f[1]} out of order")
            owner.args.append(mc.parse_fields(f[3:]))
        elif tag in ("STEXT", "RTEXT"):
            owner = sent[int(f[1])] if tag == "STEXT" else recv[int(f[1])]
            owner.args[int(f[2])]["full_text"] = _unhex(f[3])
    if not log.id:
        raise CaptureError(f"{role}: no ME line (never connected?)")
    return log


def arg_key(a: dict[str, Any]) -> str:
    """What identifies a printed value: its var2str, or the digest of it for big values."""
    return a["text"] if "text" in a else "sha256:" + a["text_sha256"]


def arg_text(a: dict[str, Any]) -> str:
    return a["text"] if "text" in a else a["full_text"]


# --------------------------------------------------------------------------------------------------
# running the three engines


class MpWorkspace(mc.Workspace):
    """make_captures.Workspace with the multiplayer project (tools/captures/godot3_mp) copied instead."""

    def __init__(self, godot: str, keep: bool) -> None:  # noqa: D107 - same fields as the base class
        self.godot = godot
        self.keep = keep
        self.dir = Path(tempfile.mkdtemp(prefix="gdx-mp-captures-"))
        self.project = self.dir / "project"
        shutil.copytree(PROJECT, self.project)
        # the value printer both capture projects share (godot3_mp/report.gd preloads it)
        shutil.copy(HERE / "godot3" / "report.gd", self.project / "capture_report.gd")
        self.procs: list[mc.Proc] = []


def wait_line(p: mc.Proc, tag: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(f and f[0] == tag for f in mc.cap_lines(p.stderr())):
            return
        if p.popen.poll() is not None:
            raise CaptureError(f"{p.name} exited before printing {tag}:\n{p.stderr()[-3000:]}")
        time.sleep(0.05)
    raise CaptureError(f"{p.name}: no {tag} after {timeout} s")


def run_peers(ctx: mc.Ctx, transport: str, bpf: str, pcap: Path, port: int,
              client_ports: dict[str, int] | None = None) -> dict[str, PeerLog]:
    """Server first; client a once the server listens; client b once a is connected (so the server
    sees a first and can tell the two apart).  All three must print DONE and nothing unexpected."""
    ws = MpWorkspace(ctx.godot, ctx.keep)
    try:
        with tshark_capture(ctx.tshark, bpf, pcap):
            procs = start_group(ws, transport, port, client_ports)
        return finish_group(procs)
    finally:
        ws.close()


def start_group(ws: MpWorkspace, transport: str, port: int, client_ports: dict[str, int] | None = None,
                roles: tuple[str, ...] = ("s", "a", "b"), env: dict[str, str] | None = None,
                tag: str = "") -> dict[str, mc.Proc]:
    """Start the peers one after the other (see run_peers) and wait until every one has quit."""
    procs: dict[str, mc.Proc] = {}
    for role in roles:
        penv = {"GDX_ROLE": role, "GDX_TRANSPORT": transport, "GDX_PORT": str(port),
                "GDX_CLIENT_PORT": str((client_ports or {}).get(role, 0)), **(env or {})}
        procs[role] = ws.script(f"{transport}{tag}-{role}", "mp_peer.gd", penv)
        wait_line(procs[role], "READY" if role == "s" else "CONNECTED", 30)
    for p in procs.values():
        p.wait(PEER_TIMEOUT)
    return procs


def finish_group(procs: dict[str, mc.Proc]) -> dict[str, PeerLog]:
    for p in procs.values():
        mc.check_engine(p)
    return {role: parse_log(role, p) for role, p in procs.items()}


# --------------------------------------------------------------------------------------------------
# the wire, read without godot_dissect


@dataclass
class Hop:
    """One Godot packet between two processes: an ENet packet (fragments joined) or a WebSocket message."""

    flow: str
    src: str  # role of the sending process
    dst: str  # role of the receiving process
    order: tuple[Any, ...]  # where it completes in the pcap
    frame: int
    data: bytes
    meta: dict[str, Any] = field(default_factory=dict)


# ENet 1.3 command numbers: (name, size including the 4-byte command header, without data).  The data
# commands: (offset of u16 dataLength, offset of the data).  Only what the self-check needs.
def enet_header_size(data: bytes) -> int:
    """2, or 4 with the SENT_TIME flag (bit 15 of the big-endian peer word)."""
    return 4 if len(data) >= 2 and data[0] & 0x80 else 2


def enet_compressed(data: bytes) -> bool:
    return len(data) >= 2 and bool(data[0] & 0x40)  # bit 14 of the peer word


def enet_walk(data: bytes, where: str, plain: bytes | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The protocol header and the commands of one datagram (big-endian fields).  A compressed datagram
    (bit 14) needs ``plain``: its body as the engine's decompressor gave it back."""
    if len(data) < 2:
        raise CaptureError(f"{where}: datagram shorter than the ENet header")
    (pid,) = struct.unpack_from("!H", data, 0)
    head: dict[str, Any] = {"peer_id": pid & 0x0FFF, "session_id": (pid >> 12) & 3}
    pos = 2
    if pid & 0x8000:
        (head["sent_time"],) = struct.unpack_from("!H", data, 2)
        pos = 4
    if pid & 0x4000:
        if plain is None:
            raise CaptureError(f"{where}: compressed datagram (Godot's default is none)")
        head.update(compressed=True, compressed_size=len(data) - pos, decompressed_size=len(plain),
                    decompressed_sha256=hashlib.sha256(plain).hexdigest())
        data, pos = plain, 0
    cmds = []
    while pos < len(data):
        if "compressed" in head and not any(data[pos:]):
            # ENet stops at command number 0 (commandSizes[0] == 0); FastLZ pads inputs under 16 bytes
            head["padding"] = len(data) - pos
            break
        if pos + 4 > len(data):
            raise CaptureError(f"{where}: truncated command header at {pos}")
        byte, channel, rseq = struct.unpack_from("!BBH", data, pos)
        num = byte & 0x0F
        cdef = enet_spec.COMMANDS_BY_NUMBER.get(num)
        if cdef is None:
            raise CaptureError(f"{where}: unknown ENet command {num} at {pos}")
        name, size = cdef.name, cdef.size
        c: dict[str, Any] = {"command": name, "channel": channel, "reliable_seq": rseq}
        if byte & enet_spec.FLAG_ACKNOWLEDGE.mask:
            c["ack"] = True
        if byte & enet_spec.FLAG_UNSEQUENCED.mask:
            c["unsequenced"] = True
        if pos + size > len(data):
            raise CaptureError(f"{where}: truncated {name} at {pos}")
        fixed = struct.unpack_from(cdef.body_format, data, pos + enet_spec.COMMAND_HEADER_SIZE)
        body = dict(zip(cdef.field_names, fixed, strict=True))
        if cdef.data_length:
            c["data_length"] = n = body[cdef.data_length]
            if cdef.fragment_key:
                for k in ("start_seq", "fragment_count", "fragment_number", "total_length", "fragment_offset"):
                    c[k] = body[k]
            data_at, size = pos + size, size + n
            if pos + size > len(data):
                raise CaptureError(f"{where}: {name} data runs past the datagram at {pos}")
            c["_data"] = data[data_at:pos + size]
        elif name == "CONNECT":  # Godot fingerprints: channelCount, and data = the client's unique id
            c["channel_count"], c["data"] = body["channel_count"], body["data"]
        elif name == "DISCONNECT":
            c["data"] = body["data"]
        cmds.append(c)
        pos += size
    return head, cmds


def enet_hops(tshark: str, pcap: Path, role_of_port: dict[int, str],
              plain: dict[int, bytes] | None = None) -> tuple[list[Hop], list[dict[str, Any]]]:
    """Every delivered ENet packet per direction (reliable retransmissions once, fragments joined in
    fragmentOffset order) and the per-datagram command list.  Only datagrams between the ports of
    ``role_of_port``; ``plain``: frame -> decompressed body, for the compressed datagrams."""
    hops: list[Hop] = []
    datagrams: list[dict[str, Any]] = []
    seen_reliable: set[tuple[str, int, int]] = set()
    pending: dict[tuple[str, int, int], dict[str, Any]] = {}
    rows = mc.tshark_fields(tshark, pcap, ["frame.number", "ip.src", "udp.srcport", "ip.dst", "udp.dstport",
                                           "udp.payload"], "udp")
    for fn_s, src, sport, dst, dport, payload in rows:
        fn = int(fn_s)
        if int(sport) not in role_of_port or int(dport) not in role_of_port:
            continue
        flow = mc.flow_name("udp", (src, int(sport)), (dst, int(dport)))
        head, cmds = enet_walk(bytes.fromhex(payload), f"frame {fn}", (plain or {}).get(fn))
        datagrams.append({"frame": fn, "flow": flow, **head,
                          "commands": [{k: v for k, v in c.items() if k != "_data"} for c in cmds]})
        for i, c in enumerate(cmds):
            if "_data" not in c:
                continue
            if c.get("ack"):
                key = (flow, c["channel"], c["reliable_seq"])
                if key in seen_reliable:
                    continue  # a retransmission
                seen_reliable.add(key)
            src_role, dst_role = role_of_port[int(sport)], role_of_port[int(dport)]
            meta: dict[str, Any] = {"enet_channel": c["channel"], "enet_command": c["command"]}
            if "start_seq" not in c:
                hops.append(Hop(flow, src_role, dst_role, (fn, i), fn, c["_data"], meta))
                continue
            fk = (flow, c["channel"], c["start_seq"])
            acc = pending.setdefault(fk, {"parts": {}, "frames": [], "count": c["fragment_count"],
                                          "total": c["total_length"]})
            acc["parts"][c["fragment_offset"]] = c["_data"]
            acc["frames"].append(fn)
            if len(acc["parts"]) == acc["count"]:
                whole = b"".join(acc["parts"][k] for k in sorted(acc["parts"]))
                if len(whole) != acc["total"]:
                    raise CaptureError(f"{flow}: fragments of {fk} join to {len(whole)} bytes, not {acc['total']}")
                meta.update(enet_fragments=acc["count"], enet_frames=acc["frames"])
                hops.append(Hop(flow, src_role, dst_role, (fn, i), fn, whole, meta))
                del pending[fk]
    if pending:
        raise CaptureError(f"incomplete fragmented packets: {sorted(pending)[:5]}")
    return hops, datagrams


def tshark_ws_check(tshark: str, pcap: Path, flows: dict[str, Any]) -> dict[str, int]:
    """Wireshark's own WebSocket dissector must see the frames we parsed: the same opcodes in the same
    order per direction and, for every packet holding exactly one data frame, the same unmasked
    payload.  (make_godot4_captures.tshark_ws_check keys by source port; here the server's port
    talks to two clients.)"""
    import make_godot4_captures as mg4

    rows = mg4.tshark_fields(tshark, pcap, ["tcp.srcport", "tcp.dstport", "websocket.opcode", "data.data"],
                             "websocket", ["-d", f"tcp.port=={WS_PORT},http", "-E", "aggregator=\x1f"])
    per: dict[tuple[int, int], list[tuple[list[int], str]]] = {}
    for row in rows:
        sport, dport, op, data = (row + [""] * 4)[:4]
        per.setdefault((int(sport), int(dport)), []).append(([int(o) for o in op.split("\x1f")], data))
    compared = 0
    for name, wd in flows.items():
        src, dst = (int(e.rsplit(":", 1)[1]) for e in name.split(" ", 1)[1].split(" -> "))
        theirs = per.get((src, dst), [])
        seen = [o for ops, _ in theirs for o in ops]
        if seen != [f.opcode for f in wd.frames]:
            raise CaptureError(f"{name}: Wireshark's WebSocket dissector sees opcodes {seen[:20]}... ({len(seen)} "
                               f"frames), we parsed {len(wd.frames)}")
        i = 0
        for ops, data in theirs:
            if len(ops) == 1 and ops[0] == 2:
                if bytes.fromhex(data) != wd.frames[i].payload:
                    raise CaptureError(f"{name}: frame {i}: Wireshark's unmasked payload differs from ours")
                compared += 1
            i += len(ops)
    return {"wireshark_frames": sum(len(ops) for v in per.values() for ops, _ in v),
            "wireshark_payloads_compared": compared}


def ws_hops(tshark: str, pcap: Path, role_of_port: dict[int, str]) -> tuple[list[Hop], dict[str, Any]]:
    import make_godot4_captures as mg4  # RFC 6455 parsing of tshark's tcp.payload, shared with the Godot 4 driver

    flows = mg4.pcap_ws_flows(tshark, pcap)
    wireshark = tshark_ws_check(tshark, pcap, flows)
    hops = []
    for name, wd in flows.items():
        ends = name.split(" ", 1)[1].split(" -> ")
        src, dst = (role_of_port[int(e.rsplit(":", 1)[1])] for e in ends)
        for m in wd.messages:
            if m.opcode != 2:
                raise CaptureError(f"{name}: a non-binary message (opcode {m.opcode})")
            meta = {"ws_frames": len(m.frames)} if len(m.frames) > 1 else {}
            hops.append(Hop(name, src, dst, (m.pcap_frame, name), m.pcap_frame, m.payload, meta))
    stats = {"wireshark": wireshark, "websocket": {k: mg4.ws_stats(v) for k, v in sorted(flows.items())}}
    return hops, stats


# --------------------------------------------------------------------------------------------------
# joining the wire with the prints

# names and numbers from the spec (the prints say rpc/rset and give transfer modes as numbers)
CMD_NAMES = {c.id: c.name for c in mp_spec.GODOT3.commands}
KIND_CODE = {c.kind: c.id for c in mp_spec.GODOT3.commands if c.kind in ("rpc", "rset")}
TRANSFER_MODES = mp_spec.TRANSFER_MODES
ENET_SYSMSG = mp_spec.ENET3_SYSMSG.items[0].values
WS_SYS = {n: name for n, name in mp_spec.WS3_TYPES.items() if name != "SYS_NONE"}


def digest_or_hex(prefix: str, data: bytes) -> dict[str, Any]:
    if len(data) <= BIG:
        return {prefix + "hex": data.hex()}
    return {prefix + "size": len(data), prefix + "hex_sha256": hashlib.sha256(data).hexdigest()}


def cstring(data: bytes, where: str) -> str:
    """A NUL-terminated UTF-8 string that must end the packet."""
    if not data.endswith(b"\0") or b"\0" in data[:-1]:
        raise CaptureError(f"{where}: not one NUL-terminated string: {data[:40].hex()}")
    return data[:-1].decode("utf-8")


def slice_matches(wire: bytes, a: dict[str, Any]) -> bool:
    if "hex" in a:
        return wire.hex() == a["hex"] or padding_only_diff(wire.hex(), a["hex"], a["text"])
    return len(wire) == a["size"] and hashlib.sha256(wire).hexdigest() == a["hex_sha256"]


def arg_size(a: dict[str, Any]) -> int:
    return len(a["hex"]) // 2 if "hex" in a else a["size"]


def match_call(s: Sent, p: bytes) -> dict[str, Any] | None:
    """Does packet ``p`` carry the call ``s`` printed?  The expected bytes are built from the prints:
    command, name, argc, each argument's var2bytes, and either a cached id or the full path at the end."""
    if p[0] != KIND_CODE[s.kind] or len(p) < 5:
        return None
    name = s.name.encode() + b"\0"
    pos = 5
    if p[pos:pos + len(name)] != name:
        return None
    pos += len(name)
    if s.kind == "rpc":
        if pos >= len(p) or p[pos] != len(s.args):
            return None
        pos += 1
    slices = []
    for a in s.args:
        n = arg_size(a)
        if not slice_matches(p[pos:pos + n], a):
            return None
        slices.append(p[pos:pos + n])
        pos += n
    (target,) = struct.unpack_from("<I", p, 1)
    if target & 0x80000000:
        if target & 0x7FFFFFFF != pos or p[pos:] != s.node.encode() + b"\0":
            return None
        return {"node_target": "path", "node_path_offset": pos, "slices": slices}
    if pos != len(p):
        return None
    return {"node_target": "cache", "node_cache_id": target, "slices": slices}


def call_name(s: Sent) -> str:
    return s.kind + ("_unreliable" if s.mode else "") + ("_id" if s.target else "")


class Joiner:
    """Explains every hop by the engines' prints and keeps what has to be checked at the end."""

    def __init__(self, logs: dict[str, PeerLog], api: str) -> None:
        self.logs = logs
        self.api = api
        self.role_of_id = {log.id: r for r, log in logs.items()}
        self.sent_hits: Counter[tuple[str, int]] = Counter()
        self.recv_hits: Counter[tuple[str, int]] = Counter()
        self.simplified: dict[tuple[int, str, str], int] = {}  # (origin id, receiver role, path) -> cache id
        self.confirmed: set[tuple[str, str, str]] = set()  # (confirming role, origin role, path)
        self.cached_calls: list[tuple[int, str, str, int, str]] = []

    def id_of(self, role: str) -> int:
        return self.logs[role].id

    def processed_by(self, hop: Hop, dst_id: int) -> str:
        """The process whose MultiplayerAPI acts on the packet: the hop's receiver, unless the server
        only relays it to the client named in the header."""
        if hop.dst != "s" or dst_id in (0, 1):
            return hop.dst
        if dst_id < 0:
            raise CaptureError(f"{hop.flow}: a client sent to {dst_id}; the plan never does")
        return self.role_of_id[dst_id]

    def godot_packet(self, hop: Hop, src_id: int, dst_id: int, p: bytes) -> dict[str, Any]:
        where = f"{hop.flow} frame {hop.frame}"
        origin = self.role_of_id.get(src_id)
        if origin is None or (hop.src != "s" and origin != hop.src):
            raise CaptureError(f"{where}: source id {src_id} is not the sender's")
        if hop.src == "s" and origin != "s" and (hop.dst == origin or dst_id == 1):
            raise CaptureError(f"{where}: the server relayed a packet back or to itself")
        by = self.processed_by(hop, dst_id)
        if not p:
            raise CaptureError(f"{where}: empty multiplayer packet")
        rec: dict[str, Any] = {"command": CMD_NAMES.get(p[0], f"unknown {p[0]}")}
        if p[0] in (0, 1):
            rec.update(self.call(where, origin, src_id, by, p))
        elif p[0] == 2:
            (cache_id,) = struct.unpack_from("<I", p, 1)
            path = cstring(p[5:], where)
            if path not in {s.node for s in self.logs[origin].sent}:
                raise CaptureError(f"{where}: SIMPLIFY_PATH for {path!r}, a node {origin} never called")
            self.simplified[(src_id, by, path)] = cache_id
            rec.update(text=f"SIMPLIFY_PATH {path} cache_id={cache_id}", **digest_or_hex("", p),
                       cache_id=cache_id, node_path=path,
                       golden_source="protocol (parsed from the pcap; checked: the receiver's CONFIRM_PATH for "
                                     "this path is in the capture and the sender's later calls use this id)")
        elif p[0] == 3:
            path = cstring(p[1:], where)
            self.confirmed.add((origin, by, path))
            rec.update(text=f"CONFIRM_PATH {path}", **digest_or_hex("", p), node_path=path,
                       golden_source="protocol (parsed from the pcap; answers the SIMPLIFY_PATH for this path)")
        elif p[0] == 4:
            rec.update(self.raw(where, origin, src_id, by, p))
        else:
            raise CaptureError(f"{where}: unknown multiplayer command {p[0]}")
        rec.update(sender_role=ROLE_NAMES[origin], receiver_role=ROLE_NAMES[by], receiver_id=self.id_of(by))
        if hop.src == "s" and origin != "s":
            rec["relayed"] = True
        return rec

    def call(self, where: str, origin: str, src_id: int, by: str, p: bytes) -> dict[str, Any]:
        hits = [(s, m) for s in self.logs[origin].sent if s.kind in KIND_CODE
                if (m := match_call(s, p)) is not None]
        if len(hits) != 1:
            raise CaptureError(f"{where}: {len(hits)} printed calls of {origin} match packet {p[:48].hex()}")
        s, m = hits[0]
        keys = [arg_key(a) for a in s.args]
        recvs = [r for r in self.logs[by].received if r.kind == s.kind and r.sender == src_id and r.name == s.name
                 and [arg_key(a) for a in r.args] == keys]
        if len(recvs) != 1:
            raise CaptureError(f"{where}: {len(recvs)} prints of {by} match {s.kind} {s.name} from {origin}")
        r = recvs[0]
        if r.node_rel != s.node:
            raise CaptureError(f"{where}: {s.node} called, {r.node_rel} received")
        self.sent_hits[(s.role, s.n)] += 1
        self.recv_hits[(r.role, r.n)] += 1
        if m["node_target"] == "cache":
            self.cached_calls.append((src_id, by, s.node, m["node_cache_id"], where))
        args = []
        for wire, sa, ra in zip(m["slices"], s.args, r.args, strict=True):
            if (sa["type"], arg_key(sa)) != (ra["type"], arg_key(ra)):
                raise CaptureError(f"{where}: {s.name}: sent {sa['type_name']} {arg_key(sa)[:60]}, "
                                   f"received {ra['type_name']} {arg_key(ra)[:60]}")
            if not slice_matches(wire, ra):
                raise CaptureError(f"{where}: {s.name}: the receiver re-encodes an argument differently")
            a: dict[str, Any] = {"type": ra["type"], "type_name": ra["type_name"]}
            if "text" in ra:
                a.update(text=ra["text"], var_to_bytes=wire.hex())
                if sa["hex"] != wire.hex():
                    a["sender_hex"] = sa["hex"]
                if ra["hex"] != wire.hex():
                    a["recv_hex"] = ra["hex"]
            else:
                a.update({k: ra[k] for k in ("size", "hex_sha256", "text_size", "text_sha256", "text_head")})
            args.append(a)
        if s.kind == "rpc":
            text = f"{s.name}(" + ", ".join(arg_text(a) for a in r.args) + ")"
        else:
            text = f"{s.name} = {arg_text(r.args[0])}"
        rec: dict[str, Any] = {}
        if len(text) <= BIG:
            rec["text"] = text
        else:
            raw_text = text.encode("utf-8")
            rec.update(text_size=len(raw_text), text_sha256=hashlib.sha256(raw_text).hexdigest(), text_head=text[:200])
        rec.update(digest_or_hex("", p))
        rec.update(method=s.name, node_path=s.node, node=r.node,
                   node_target=m["node_target"], **{k: m[k] for k in ("node_path_offset", "node_cache_id") if k in m})
        if s.kind == "rpc":
            rec["argc"] = len(args)
        rec.update(args=args, remote_sender_id=r.sender, call=call_name(s), call_target=s.target,
                   transfer="unreliable" if s.mode else "reliable")
        if s.channel > 0:
            rec["transfer_channel"] = s.channel
        rec["golden_source"] = ("engine: the sender's prints before the call and the receiver's prints inside the "
                                + ("called method" if s.kind == "rpc" else "property setter")
                                + " (get_rpc_sender_id, get_path, typeof/var2str/var2bytes of each argument)")
        return rec

    def raw(self, where: str, origin: str, src_id: int, by: str, p: bytes) -> dict[str, Any]:
        data = p[1:]
        sends = [s for s in self.logs[origin].sent if s.kind == "raw" and s.data == data]
        recvs = [r for r in self.logs[by].received if r.kind == "raw" and r.sender == src_id and r.data == data]
        if len(sends) != 1 or len(recvs) != 1:
            raise CaptureError(f"{where}: RAW {data[:32].hex()}: {len(sends)} send and {len(recvs)} receive prints")
        s, r = sends[0], recvs[0]
        self.sent_hits[(s.role, s.n)] += 1
        self.recv_hits[(r.role, r.n)] += 1
        rec: dict[str, Any] = {"text": arg_text(r.args[0])}
        rec.update(digest_or_hex("", p))
        rec.update(data_hex=data.hex(), remote_sender_id=r.sender, call="send_bytes", call_target=s.target,
                   transfer=TRANSFER_MODES[s.mode],
                   golden_source="engine: send_bytes() argument printed by the sender, network_peer_packet(id, "
                                 "packet) printed by the receiver")
        return rec

    def peer_message(self, hop: Hop, name: str, peer: int, p: bytes) -> dict[str, Any]:
        """A server->client system message (ENet channel 0 / WebSocket SYS_*), checked against the
        receiving engine's signals."""
        where = f"{hop.flow} frame {hop.frame}"
        log = self.logs[hop.dst]
        if hop.src != "s":
            raise CaptureError(f"{where}: {name} from a client")
        if name in ("ADD_PEER", "SYS_ADD"):
            ok, source = ("connected", peer) in [(e, i) for e, i, _ in log.peer_events], "network_peer_connected"
        elif name in ("REMOVE_PEER", "SYS_DEL"):
            ok, source = ("disconnected", peer) in [(e, i) for e, i, _ in log.peer_events], "network_peer_disconnected"
        else:  # SYS_ID
            ok, source = log.id == peer, "get_network_unique_id()"
        if not ok:
            raise CaptureError(f"{where}: {name} {peer} but {hop.dst} printed no matching {source}")
        return {"command": name, "text": f"{name} {peer}", **digest_or_hex("", p), "peer": peer,
                "receiver_role": ROLE_NAMES[hop.dst], "receiver_id": log.id,
                "golden_source": f"engine: {source} printed by the receiver"}

    def finish(self) -> None:
        """Every print explained by a packet, every cached id the one its SIMPLIFY_PATH announced, every
        SIMPLIFY_PATH confirmed, every local (remotesync/puppetsync) call matched by a send."""
        for role, log in self.logs.items():
            for s in log.sent:
                if not self.sent_hits[(role, s.n)]:
                    raise CaptureError(f"{role} sent {s.kind} {s.name} (#{s.n}) but no packet carries it")
            for r in log.received:
                if r.sender == log.id:  # a local call (remotesync, puppetsync): no packet
                    if not any(s.name == r.name and [arg_key(a) for a in s.args] == [arg_key(a) for a in r.args]
                               for s in log.sent):
                        raise CaptureError(f"{role}: local call {r.name} without a send")
                elif not self.recv_hits[(role, r.n)]:
                    raise CaptureError(f"{role} received {r.kind} {r.name} (#{r.n}) from {r.sender}, no packet has it")
        for src_id, by, path, cache_id, where in self.cached_calls:
            if self.simplified.get((src_id, by, path)) != cache_id:
                raise CaptureError(f"{where}: cached id {cache_id} for {path}, SIMPLIFY_PATH said "
                                   f"{self.simplified.get((src_id, by, path))}")
        for (src_id, by, path) in self.simplified:
            if (by, self.role_of_id[src_id], path) not in self.confirmed:
                raise CaptureError(f"SIMPLIFY_PATH {path} from {src_id} to {by} never confirmed")


def build_golden(hops: list[Hop], joiner: Joiner, header: Callable[[Hop], dict[str, Any]]) -> list[dict[str, Any]]:
    """One line per hop, in pcap order; ``header`` turns a hop into its transport keys and the record."""
    recs = []
    index: Counter[str] = Counter()
    for seq, hop in enumerate(sorted(hops, key=lambda h: h.order)):
        rec: dict[str, Any] = {"seq": seq, "flow": hop.flow, "index": index[hop.flow], "kind": "multiplayer",
                               "api": joiner.api, "frame": hop.frame}
        index[hop.flow] += 1
        body = header(hop)
        # key order: what a reader compares first, then where it came from
        for k in ("command", "text", "text_size", "text_sha256", "text_head", "hex", "size", "hex_sha256"):
            if k in body:
                rec[k] = body.pop(k)
        rec.update(hop.meta)
        rec.update(body)
        recs.append(rec)
    joiner.finish()
    return recs


def enet_header(joiner: Joiner) -> Callable[[Hop], dict[str, Any]]:
    def header(hop: Hop) -> dict[str, Any]:
        if hop.meta["enet_channel"] == 0:  # NetworkedMultiplayerENet SYSCH_CONFIG: [u32 SYSMSG][u32 peer id]
            if len(hop.data) != 8:
                raise CaptureError(f"{hop.flow} frame {hop.frame}: channel-0 message of {len(hop.data)} bytes")
            kind, peer = struct.unpack("<II", hop.data)
            return joiner.peer_message(hop, ENET_SYSMSG[kind], peer, hop.data)
        src_id, dst_id = struct.unpack_from("<Ii", hop.data)
        return {"peer_src": src_id, "peer_dst": dst_id, **joiner.godot_packet(hop, src_id, dst_id, hop.data[8:])}
    return header


def ws_header(joiner: Joiner) -> Callable[[Hop], dict[str, Any]]:
    def header(hop: Hop) -> dict[str, Any]:
        if len(hop.data) < 9:
            raise CaptureError(f"{hop.flow} frame {hop.frame}: message shorter than the 9-byte header")
        kind, src_id, dst_id = struct.unpack_from("<Bii", hop.data)
        head = {"ws_type": kind, "peer_src": src_id, "peer_dst": dst_id}
        if kind == 0:
            return {**head, **joiner.godot_packet(hop, src_id, dst_id, hop.data[9:])}
        if kind not in WS_SYS or len(hop.data) != 13 or (src_id, dst_id) != (1, 0):
            raise CaptureError(f"{hop.flow} frame {hop.frame}: bad system message {hop.data.hex()}")
        (peer,) = struct.unpack_from("<i", hop.data, 9)
        return {**head, **joiner.peer_message(hop, WS_SYS[kind], peer, hop.data[9:])}
    return header


# --------------------------------------------------------------------------------------------------
# the two captures


def check_connect_disconnect(datagrams: list[dict[str, Any]], logs: dict[str, PeerLog],
                             port_role: dict[int, str] | None = None) -> dict[str, Any]:
    """ENet CONNECT data = the client's unique id, channelCount 3 (3.x); DISCONNECT data = the closing
    peer's unique id (3.x close_connection).  One of each per client."""
    port_role = port_role or {v: k for k, v in ENET_PORTS.items()}
    clients = sum(1 for r in logs if r != "s")
    seen = Counter()
    for d in datagrams:
        sender = port_role[int(d["flow"].split(" ")[1].rsplit(":", 1)[1])]
        for c in d["commands"]:
            if c["command"] == "CONNECT":
                if c["data"] != logs[sender].id or c["channel_count"] != 3:
                    raise CaptureError(f"frame {d['frame']}: CONNECT data {c['data']} channels {c['channel_count']}, "
                                       f"{sender} printed id {logs[sender].id}")
                seen["CONNECT"] += 1
            elif c["command"] == "DISCONNECT":
                if c["data"] != logs[sender].id:
                    raise CaptureError(f"frame {d['frame']}: DISCONNECT data {c['data']}, "
                                       f"{sender} is {logs[sender].id}")
                seen["DISCONNECT"] += 1
    if seen != Counter({"CONNECT": clients, "DISCONNECT": clients}):
        raise CaptureError(f"expected {clients} CONNECTs and {clients} DISCONNECTs, saw {dict(seen)}")
    return dict(seen)


def summary(recs: list[dict[str, Any]]) -> dict[str, Any]:
    flows: dict[str, dict[str, Any]] = {}
    for r in recs:
        e = flows.setdefault(r["flow"], {"flow": r["flow"], "messages": 0})
        e["messages"] += 1
    return {"messages": len(recs), "flows": list(flows.values()),
            "commands": dict(sorted(Counter(r["command"] for r in recs).items())),
            "relayed": sum(1 for r in recs if r.get("relayed")),
            "full_path_calls": sum(1 for r in recs if r.get("node_target") == "path"),
            "cached_calls": sum(1 for r in recs if r.get("node_target") == "cache")}


def partial_pcap(ctx: mc.Ctx, name: str) -> Path:
    """Where tshark writes; renamed to NAME.pcapng only once the golden has been checked against it."""
    return ctx.out / f"{name}.pcapng.part"


def make_enet(ctx: mc.Ctx, name: str) -> dict[str, Any]:
    mc.require_ports(*((socket.SOCK_DGRAM, p) for p in ENET_PORTS.values()))
    pcap = partial_pcap(ctx, name)
    logs = run_peers(ctx, "enet", f"udp port {ENET_PORTS['s']}", pcap, ENET_PORTS["s"], ENET_PORTS)
    for role in ("a", "b"):
        ports = [port for ev, i, port in logs["s"].peer_events if ev == "connected" and i == logs[role].id]
        if ports != [ENET_PORTS[role]]:
            raise CaptureError(f"the server saw {role} on port(s) {ports}, not {ENET_PORTS[role]}")
    hops, datagrams = enet_hops(ctx.tshark, pcap, {v: k for k, v in ENET_PORTS.items()})
    connects = check_connect_disconnect(datagrams, logs)
    joiner = Joiner(logs, "NetworkedMultiplayerENet + MultiplayerAPI (Godot 3.2.3)")
    recs = build_golden(hops, joiner, enet_header(joiner))
    mc.write_golden(ctx.out / f"{name}.golden.jsonl", recs)
    mc.write_golden(ctx.out / f"{name}.enet.jsonl", datagrams)
    enet_cmds = Counter(c["command"] for d in datagrams for c in d["commands"])
    delivered = Counter((r["enet_command"], r["enet_channel"]) for r in recs)
    by_command = {f"{c} ch{ch}": n for (c, ch), n in sorted(delivered.items())}
    return {**summary(recs), "peer_ids": {ROLE_NAMES[r]: log.id for r, log in logs.items()},
            "enet": {"datagrams_file": f"{name}.enet.jsonl", "datagrams": len(datagrams),
                     "commands": dict(sorted(enet_cmds.items())), "godot_packets_by_command_and_channel": by_command,
                     "fragmented_packets": sum(1 for r in recs if "enet_fragments" in r), "checked": connects}}


def make_websocket(ctx: mc.Ctx, name: str) -> dict[str, Any]:
    mc.require_ports((socket.SOCK_STREAM, WS_PORT))
    pcap = partial_pcap(ctx, name)
    logs = run_peers(ctx, "websocket", f"tcp port {WS_PORT}", pcap, WS_PORT)
    role_of_port = {WS_PORT: "s"}
    for ev, i, port in logs["s"].peer_events:
        if ev == "connected":
            role_of_port[port] = {log.id: r for r, log in logs.items()}[i]
    hops, stats = ws_hops(ctx.tshark, pcap, role_of_port)
    joiner = Joiner(logs, "WebSocketMultiplayerPeer (WebSocketServer/WebSocketClient) + MultiplayerAPI (Godot 3.2.3)")
    recs = build_golden(hops, joiner, ws_header(joiner))
    mc.write_golden(ctx.out / f"{name}.golden.jsonl", recs)
    return {**summary(recs), "peer_ids": {ROLE_NAMES[r]: log.id for r, log in logs.items()}, **stats}


#: what read the compressed datagrams for the golden (tools/captures/engine_codecs.py)
ENGINE_CODECS = {
    "COMPRESS_RANGE_CODER": "enet_range_coder_decompress of the system libenet.so.7 (godot3-server's own ENet)",
    "COMPRESS_FASTLZ": "Godot 3.2.3 Compression::decompress MODE_FASTLZ (PoolByteArray.decompress, codec.gd)",
    "COMPRESS_ZLIB": "Godot 3.2.3 Compression::decompress MODE_DEFLATE (PoolByteArray.decompress, codec.gd)",
    "COMPRESS_ZSTD": "Godot 3.2.3 Compression::decompress MODE_ZSTD (PoolByteArray.decompress, codec.gd)",
}


def compression_name(mode: str) -> str:
    """COMPRESS_RANGE_CODER -> range_coder: the names godot-dissect's ENet compression option takes."""
    return mode.removeprefix("COMPRESS_").lower()


def engine_codec_check(ws: MpWorkspace, ctx: mc.Ctx, pcap: Path) -> dict[int, ec.CodecJob]:
    """Every datagram of the capture through the engine's codec of its pair: frame -> job."""
    mode_of_port = {port: mode for mode, pair in COMPRESSED_PAIRS.items() for port in pair}
    jobs: dict[int, ec.CodecJob] = {}
    for fn_s, sport, dport, payload in mc.tshark_fields(ctx.tshark, pcap, ["frame.number", "udp.srcport",
                                                                           "udp.dstport", "udp.payload"], "udp"):
        mode = mode_of_port[int(sport)]
        if mode_of_port[int(dport)] != mode:
            raise CaptureError(f"frame {fn_s}: between two pairs ({sport} -> {dport})")
        data = bytes.fromhex(payload)
        hs = enet_header_size(data)
        jobs[int(fn_s)] = ec.CodecJob(mode, data[hs:], hs, enet_compressed(data))
    ec.run_jobs(ws, list(jobs.values()))
    for fn, j in jobs.items():
        if j.compressed and j.plain is None:
            raise CaptureError(f"frame {fn}: the engine's {j.mode} decompressor rejects the body")
        if j.compressed and not j.recompressed_equal:
            raise CaptureError(f"frame {fn}: {j.mode}: compressing the decompressed body again does not give "
                               "the wire bytes back")
        if not j.compressed and 0 < j.compressed_size < len(j.body):
            raise CaptureError(f"frame {fn}: sent uncompressed, but {j.mode} makes its {len(j.body)} bytes "
                               f"{j.compressed_size}: ENet would have compressed it")
    return jobs


def make_enet_compressed(ctx: mc.Ctx, name: str) -> dict[str, Any]:
    """One server + client "a" pair per compression mode, one after the other in one capture."""
    ports = sorted(port for pair in COMPRESSED_PAIRS.values() for port in pair)
    mc.require_ports(*((socket.SOCK_DGRAM, port) for port in ports))
    pcap = partial_pcap(ctx, name)
    ws = MpWorkspace(ctx.godot, ctx.keep)
    try:
        logs_by_mode: dict[str, dict[str, PeerLog]] = {}
        with tshark_capture(ctx.tshark, f"udp portrange {ports[0]}-{ports[-1]}", pcap):
            for mode, (server_port, client_port) in COMPRESSED_PAIRS.items():
                procs = start_group(ws, "enet", server_port, {"a": client_port}, ("s", "a"),
                                    {"GDX_PLAN": "compressed", "GDX_COMPRESSION": mode}, "-" + compression_name(mode))
                logs_by_mode[mode] = finish_group(procs)
        jobs = engine_codec_check(ws, ctx, pcap)
    finally:
        ws.close()
    recs: list[dict[str, Any]] = []
    all_datagrams: list[dict[str, Any]] = []
    pairs: dict[str, Any] = {}
    for mode, (server_port, client_port) in COMPRESSED_PAIRS.items():
        logs = logs_by_mode[mode]
        values = {log.compression for log in logs.values()}
        if len(values) != 1 or next(iter(values)) is None or next(iter(values))[0] != mode:
            raise CaptureError(f"{mode}: the engines printed compression modes {values}")
        mode_value = next(iter(values))[1]
        cname = compression_name(mode)
        ports_of = {server_port: "s", client_port: "a"}
        seen = [port for ev, i, port in logs["s"].peer_events if ev == "connected" and i == logs["a"].id]
        if seen != [client_port]:
            raise CaptureError(f"{mode}: the server saw client a on port(s) {seen}, not {client_port}")
        plain = {fn: j.plain for fn, j in jobs.items() if j.compressed and j.mode == mode and j.plain is not None}
        hops, datagrams = enet_hops(ctx.tshark, pcap, ports_of, plain)
        connects = check_connect_disconnect(datagrams, logs, ports_of)
        joiner = Joiner(logs, "NetworkedMultiplayerENet + MultiplayerAPI (Godot 3.2.3)")
        compressed_frames = {d["frame"] for d in datagrams if d.get("compressed")}
        uncompressed_data = []
        for d in datagrams:
            d["compression"] = cname
            if not d.get("compressed"):
                d.update(compressed=False, size=len(jobs[d["frame"]].body),
                         engine_compressed_size=jobs[d["frame"]].compressed_size)
                if any("data_length" in c for c in d["commands"]):
                    uncompressed_data.append({"frame": d["frame"], "flow": d["flow"], "size": d["size"],
                                              "engine_compressed_size": d["engine_compressed_size"],
                                              "commands": [c["command"] for c in d["commands"]]})
        for r in build_golden(hops, joiner, enet_header(joiner)):
            frames = r.get("enet_frames", [r["frame"]])
            head = {k: r.pop(k) for k in ("seq", "flow", "index", "kind", "api")}
            r = {**head, "compression": cname, "compression_mode": mode_value, **r,
                 "enet_compressed": all(f in compressed_frames for f in frames)}
            if not r["enet_compressed"]:
                r["enet_uncompressed_frames"] = [f for f in frames if f not in compressed_frames]
            recs.append(r)
        all_datagrams += datagrams
        pairs[cname] = {
            "compression_mode": mode_value, "constant": f"NetworkedMultiplayerENet.{mode}",
            "decompressed_by": ENGINE_CODECS[mode],
            "ports": {"server": server_port, "client": client_port},
            "peer_ids": {ROLE_NAMES[r]: log.id for r, log in logs.items()},
            "godot_packets": len(hops), "fragmented_packets": sum(1 for h in hops if "enet_fragments" in h.meta),
            "datagrams": len(datagrams), "compressed_datagrams": len(compressed_frames),
            "uncompressed_datagrams": len(datagrams) - len(compressed_frames),
            "uncompressed_datagrams_with_data": uncompressed_data, "checked": connects,
        }
    frames = [r["frame"] for r in recs]
    if frames != sorted(frames):
        raise CaptureError("the pairs' packets interleave in the capture")
    for seq, r in enumerate(recs):
        r["seq"] = seq
    mc.write_golden(ctx.out / f"{name}.golden.jsonl", recs)
    mc.write_golden(ctx.out / f"{name}.enet.jsonl", all_datagrams)
    enet_cmds = Counter(c["command"] for d in all_datagrams for c in d["commands"])
    return {**summary(recs), "enet": {"datagrams_file": f"{name}.enet.jsonl", "datagrams": len(all_datagrams),
                                      "commands": dict(sorted(enet_cmds.items()))}, "pairs": pairs}


MAKERS: dict[str, Callable[[mc.Ctx, str], dict[str, Any]]] = {
    "godot3-enet-multiplayer": make_enet,
    "godot3-websocket-multiplayer": make_websocket,
    "godot3-enet-compressed": make_enet_compressed,
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", action="append", choices=sorted(MAKERS), help="make only this capture (repeatable)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory (default: captures/)")
    mc.add_engine_args(ap)
    args = ap.parse_args(argv)
    ctx = mc.engine_ctx(args)
    if ctx is None:
        return 2
    failed = 0
    for name in args.only or list(MAKERS):
        print(f"{name} ...", file=sys.stderr, flush=True)
        t0 = time.monotonic()
        pcap = ctx.out / f"{name}.pcapng"
        try:
            info = MAKERS[name](ctx, name)
        except CaptureError as e:
            print(f"{name}: FAILED (nothing written): {e}", file=sys.stderr)
            partial_pcap(ctx, name).unlink(missing_ok=True)
            failed += 1
            continue
        partial_pcap(ctx, name).replace(pcap)
        entry = {"pcap": pcap.name, "golden": f"{name}.golden.jsonl", "description": DESCRIPTIONS[name],
                 "engine": f"godot3-server {ctx.version}", "pcap_bytes": pcap.stat().st_size,
                 "packets": mc.pcap_packets(ctx.tshark, pcap), **info}
        mc.update_manifest(ctx.out, name, entry)
        print(f"{name}: {entry['messages']} multiplayer packets, {entry['packets']} pcap packets, "
              f"{entry['pcap_bytes']} bytes ({time.monotonic() - t0:.1f} s)", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
