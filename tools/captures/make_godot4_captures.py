#!/usr/bin/env python3
"""Make the real Godot 4.6 WebSocket captures in ``captures/``: pcapng + goldens printed by the engine.

    python tools/captures/make_godot4_captures.py [--only NAME ...] [--out captures/] [--keep-log DIR]

There is no native Godot 4 here, so the official Godot 4.6 web export template (installed by
``godot_dissect.engines.ensure_installed("godot4")``) runs in headless Chromium, where it is a
WebSocket client (the browser's WebSocket does the framing; the payload bytes are Godot's).  The
server is ours (``tools/captures/godot4/wsserver.py``, standard-library RFC 6455, no
permessage-deflate).  ``tshark -i lo`` records the WebSocket port only; the page and the engine files
come from a loopback HTTP server on another (ephemeral) port.

Captures (see captures/README.md):
  godot4-websocket-put-var      WebSocketPeer.put_var/send_text of every Godot 4 type + replies
  godot4-websocket-multiplayer  WebSocketMultiplayerPeer + SceneMultiplayer RPCs

Every golden line comes from the engine's own prints (typeof, type_string, var_to_str, var_to_bytes,
the packets it received), never from godot_dissect's decoder; godot_dissect.encode() only makes the
bytes our server sends.  Before a capture is written, the golden is checked against the pcap without
godot_dissect: the TCP payloads (tshark) are parsed as RFC 6455 frames and unmasked here, and each
direction must hold exactly the golden's messages, in order, with the same bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
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
PROJECT = HERE / "godot4"
DEFAULT_OUT = ROOT / "captures"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(PROJECT))

from browser import find_chromium, run_in_chromium  # noqa: E402
from common import CaptureError, padding_only_diff, tshark_capture  # noqa: E402
from wsserver import OP_BINARY, OP_CLOSE, OP_TEXT, WsConn, WsServer  # noqa: E402

from godot_dissect import encode  # noqa: E402
from godot_dissect.engines import ensure_installed, web_engine_dir  # noqa: E402
from godot_dissect.engines.pck import build_pck, default_settings, project_binary  # noqa: E402
from godot_dissect.values import (  # noqa: E402
    AABB,
    Color,
    ContainerType,
    Float64,
    NodePath,
    PackedColorArray,
    PackedFloat32Array,
    PackedInt64Array,
    PackedStringArray,
    PackedVector3Array,
    PackedVector4Array,
    Projection,
    Quaternion,
    Rect2i,
    StringName,
    Transform3D,
    TypedArray,
    TypedDictionary,
    Vector2i,
    Vector3,
    Vector4,
    WideInt,
)

PUT_VAR_PORT = 4260
MULTIPLAYER_PORT = 4261
BIG = 4096  # as report.gd


DESCRIPTIONS = {
    "godot4-websocket-put-var": (
        "Godot 4.6 (official web export template in headless Chromium) WebSocketPeer client -> Python RFC 6455 "
        "server on ws://127.0.0.1:4260 (no permessage-deflate). Client->server: one binary message per "
        "put_var() (payload = var_to_bytes, no length prefix) for every Godot 4 type (int64, float64/NaN/inf, "
        "unicode, all math types incl. Vector4/Projection, StringName, NodePaths, RIDs, Objects as ids, "
        "Callable, Signal, typed Array/Dictionary, every Packed*Array incl. PackedVector4Array), game-state "
        "Dictionaries, a 100000-byte PackedByteArray and a 1500-element Array (both span several TCP segments "
        "and use the 64-bit WebSocket length), a burst of 40 small Dictionaries sent in one frame, two "
        "send_text() text messages, then \"__end__\". Frames masked by Chromium, never fragmented. "
        "Server->client: replies encoded with godot_dissect.encode (one after the first message, the rest "
        "after \"__end__\": math types, typed containers, a message in 4 frames (continuation frames with a "
        "ping between the first two), a text message, an 80 KB PackedFloat32Array, \"__bye__\"), each read by "
        "the engine with get_packet()+bytes_to_var() and printed; then a 1000 close handshake."),
    "godot4-websocket-multiplayer": (
        "Godot 4.6 (web export in headless Chromium) WebSocketMultiplayerPeer.create_client + SceneMultiplayer "
        "against a Python stand-in server on ws://127.0.0.1:4261 that speaks the multiplayer protocol: "
        "4-byte peer id, CONFIRM_PATH for the client's SIMPLIFY_PATH, RPCs to the client (full-path form) "
        "and SYS/RAW packets. The client calls @rpc methods on /root/Main with arguments of many types "
        "(before and after the path is confirmed: full-path vs cached node id), send_bytes (RAW), and prints "
        "what it sends and receives."),
}


# --------------------------------------------------------------------------------------------------
# tshark


def tshark_fields(tshark: str, pcap: Path, fields: list[str], display_filter: str,
                  extra: list[str] | None = None) -> list[list[str]]:
    cmd = [tshark, "-r", str(pcap), "-Y", display_filter, "-T", "fields", "-E", "separator=\t",
           "-o", "tcp.relative_sequence_numbers:TRUE", *(extra or [])]
    for f in fields:
        cmd += ["-e", f]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if res.returncode != 0:
        raise CaptureError("tshark -r failed: " + res.stderr)
    return [ln.split("\t") for ln in res.stdout.splitlines()]


def flow_name(src: tuple[str, int], dst: tuple[str, int]) -> str:
    return f"websocket {src[0]}:{src[1]} -> {dst[0]}:{dst[1]}"


# --------------------------------------------------------------------------------------------------
# the pcap, read without godot_dissect: TCP payloads from tshark, RFC 6455 parsed here


@dataclass
class WsFrame:
    fin: bool
    opcode: int
    masked: bool
    payload: bytes  # unmasked
    start: int  # stream offsets of the frame header / end
    end: int


@dataclass
class WsMessage:
    opcode: int  # 1 text, 2 binary
    payload: bytes
    frames: list[WsFrame]
    pcap_frame: int  # pcap frame number holding the message's last byte
    segments: int  # TCP segments the message's bytes are in


@dataclass
class WsDirection:
    flow: str
    data: bytes = b""
    segments: list[tuple[int, int, int]] = field(default_factory=list)  # (start, end, pcap frame)
    http: bytes = b""
    frames: list[WsFrame] = field(default_factory=list)
    messages: list[WsMessage] = field(default_factory=list)

    def frame_at(self, offset: int) -> int:
        for a, b, fn in self.segments:
            if a <= offset < b:
                return fn
        raise CaptureError(f"{self.flow}: offset {offset} outside the stream")

    def segments_over(self, a: int, b: int) -> int:
        return sum(1 for s, e, _ in self.segments if s < b and e > a)


def pcap_ws_flows(tshark: str, pcap: Path) -> dict[str, WsDirection]:
    per: dict[str, dict[int, tuple[bytes, int]]] = {}
    for fn, src, sport, dst, dport, seq, payload in tshark_fields(
            tshark, pcap, ["frame.number", "ip.src", "tcp.srcport", "ip.dst", "tcp.dstport", "tcp.seq", "tcp.payload"],
            "tcp.len > 0", ["-o", "tcp.desegment_tcp_streams:FALSE"]):
        d = per.setdefault(flow_name((src, int(sport)), (dst, int(dport))), {})
        d.setdefault(int(seq), (bytes.fromhex(payload), int(fn)))
    out = {}
    for name, d in per.items():
        wd = WsDirection(name)
        pos = None
        chunks = []
        for seq in sorted(d):
            data, fn = d[seq]
            if pos is not None and seq != pos:
                raise CaptureError(f"{name}: gap or overlap in the TCP stream at relative seq {seq} (expected {pos})")
            start = sum(len(c) for c in chunks)
            chunks.append(data)
            wd.segments.append((start, start + len(data), fn))
            pos = seq + len(data)
        wd.data = b"".join(chunks)
        parse_ws(wd)
        out[name] = wd
    return out


def parse_ws(wd: WsDirection) -> None:
    data = wd.data
    end = data.find(b"\r\n\r\n")
    if end < 0:
        raise CaptureError(f"{wd.flow}: no HTTP head")
    wd.http = data[:end + 4]
    pos = end + 4
    pending: list[WsFrame] = []
    while pos < len(data):
        start = pos
        if pos + 2 > len(data):
            raise CaptureError(f"{wd.flow}: truncated frame header at {pos}")
        b0, b1 = data[pos], data[pos + 1]
        pos += 2
        n = b1 & 0x7F
        if n == 126:
            (n,) = struct.unpack_from("!H", data, pos)
            pos += 2
        elif n == 127:
            (n,) = struct.unpack_from("!Q", data, pos)
            pos += 8
        mask = b""
        if b1 & 0x80:
            mask = data[pos:pos + 4]
            pos += 4
        payload = data[pos:pos + n]
        if len(payload) != n:
            raise CaptureError(f"{wd.flow}: truncated frame payload at {start}")
        pos += n
        if mask:
            payload = bytes(c ^ mask[i % 4] for i, c in enumerate(payload))
        if b0 & 0x70:
            raise CaptureError(f"{wd.flow}: RSV bits set at {start} (an extension was negotiated?)")
        fr = WsFrame(bool(b0 & 0x80), b0 & 0x0F, bool(mask), payload, start, pos)
        wd.frames.append(fr)
        if fr.opcode >= 8:
            continue
        pending.append(fr)
        if fr.fin:
            first = pending[0]
            wd.messages.append(WsMessage(first.opcode, b"".join(f.payload for f in pending), pending,
                                         wd.frame_at(fr.end - 1), wd.segments_over(first.start, fr.end)))
            pending = []
    if pending:
        raise CaptureError(f"{wd.flow}: unfinished fragmented message at the end")


def tshark_ws_check(tshark: str, pcap: Path, port: int, flows: dict[str, WsDirection]) -> dict[str, Any]:
    """Wireshark's own WebSocket dissector (HTTP upgrade on PORT, its reassembly and unmasking) must see
    the same frames: the same opcodes in the same order and, for every packet that holds exactly one
    data frame (Wireshark 4.0 merges the payload fields of several frames in one packet), the same
    unmasked payload."""
    rows = tshark_fields(tshark, pcap, ["tcp.srcport", "websocket.opcode", "data.data", "websocket.payload.text"],
                         "websocket", ["-d", f"tcp.port=={port},http", "-E", "aggregator=\x1f"])
    per: dict[int, list[tuple[list[int], str, str]]] = {}
    for row in rows:
        sport, op, data, text = (row + [""] * 4)[:4]
        per.setdefault(int(sport), []).append(([int(o) for o in op.split("\x1f")], data, text))
    compared = 0
    for name, wd in flows.items():
        sport = int(name.split(" ")[1].rsplit(":", 1)[1])
        seen = [o for ops, _, _ in per.get(sport, []) for o in ops]
        ours = [f.opcode for f in wd.frames]
        if seen != ours:
            raise CaptureError(f"{name}: Wireshark's WebSocket dissector sees opcodes {seen[:20]}..."
                               f" ({len(seen)} frames), we parsed {ours[:20]}... ({len(ours)})")
        i = 0
        for ops, data, text in per.get(sport, []):
            if len(ops) == 1 and ops[0] in (OP_TEXT, OP_BINARY):
                theirs = text.encode("utf-8") if ops[0] == OP_TEXT else bytes.fromhex(data)
                if theirs != wd.frames[i].payload:
                    raise CaptureError(f"{name}: frame {i}: Wireshark's unmasked payload differs from ours")
                compared += 1
            i += len(ops)
    return {"wireshark_frames": sum(len(ops) for v in per.values() for ops, _, _ in v),
            "wireshark_payloads_compared": compared}


def ws_stats(wd: WsDirection) -> dict[str, Any]:
    starts = [m.frames[0].start for m in wd.messages]
    ops: dict[str, int] = {}
    for f in wd.frames:
        if f.opcode >= 8:
            k = {8: "close", 9: "ping", 10: "pong"}.get(f.opcode, str(f.opcode))
            ops[k] = ops.get(k, 0) + 1
    return {
        "tcp_segments": len(wd.segments),
        "bytes": len(wd.data),
        "largest_segment": max((b - a for a, b, _ in wd.segments), default=0),
        "frames": len(wd.frames),
        "masked_frames": sum(1 for f in wd.frames if f.masked),
        "messages": len(wd.messages),
        "fragmented_messages": sum(1 for m in wd.messages if len(m.frames) > 1),
        "control_frames": ops,
        "frames_with_64bit_length": sum(1 for f in wd.frames if len(f.payload) > 65535),
        "frames_with_16bit_length": sum(1 for f in wd.frames if 125 < len(f.payload) <= 65535),
        "messages_over_2plus_segments": sum(1 for m in wd.messages if m.segments >= 2),
        "messages_over_3plus_segments": sum(1 for m in wd.messages if m.segments >= 3),
        "segments_with_2plus_message_starts": sum(1 for a, b, _ in wd.segments
                                                  if sum(1 for s in starts if a <= s < b) >= 2),
        "most_message_starts_in_one_segment": max((sum(1 for s in starts if a <= s < b) for a, b, _ in wd.segments),
                                                  default=0),
    }


# --------------------------------------------------------------------------------------------------
# what the engine printed (tools/captures/godot4/report.gd)


def cap_lines(out: list[str]) -> list[list[str]]:
    return [ln.split("\t")[1:] for ln in out if ln.startswith("@@CAP\t")]


def unhex(s: str) -> str:
    return bytes.fromhex(s).decode("utf-8")


def parse_fields(f: list[str]) -> dict[str, Any]:
    t, tname, kind = int(f[0]), f[1], f[2]
    out: dict[str, Any] = {"type": t, "type_name": tname}
    if kind == "full":
        out.update(text=unhex(f[3]), hex=f[4].lower(), rt_type=int(f[5]), rt_type_name=f[6], rt_text=unhex(f[7]),
                   oid=f[8])
    elif kind == "big":
        out.update(size=int(f[3]), hex_sha256=f[4].lower(), text_size=int(f[5]), text_sha256=f[6].lower(),
                   text_head=bytes.fromhex(f[7]).decode("utf-8", errors="replace"), rt_type=int(f[8]),
                   rt_type_name=f[9], oid=f[10])
    else:
        raise CaptureError(f"bad fields kind {kind!r}")
    return out


# Engine stderr lines that are expected in the web template (harmless).
BENIGN_ERR = (
    re.compile(r"Could not load global script cache"),
    re.compile(r"^\s+at: get_global_class_list"),
)


def engine_errors(err: list[str], allowed: tuple[str, ...] = ()) -> list[str]:
    return [ln for ln in err if ln.strip() and not any(r.search(ln) for r in BENIGN_ERR)
            and not any(a in ln for a in allowed)]


@dataclass
class Ctx:
    tshark: str
    out: Path
    keep_log: Path | None
    chromium_version: str = ""


def game_pck(main_script: str, config: dict[str, Any], extra: tuple[str, ...] = ("report.gd",)) -> bytes:
    files = [
        ("project.binary", project_binary(default_settings("res://main.tscn"))),
        ("main.tscn", (PROJECT / "main.tscn").read_bytes()),
        ("main.gd", (PROJECT / main_script).read_bytes()),
        ("config.json", json.dumps(config).encode()),
    ]
    files += [(name, (PROJECT / name).read_bytes()) for name in extra]
    return build_pck(files)


def port_free(port: int) -> bool:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def run_session(ctx: Ctx, name: str, port: int, pck: bytes, handler: Callable[[WsConn], None],
                pcap: Path, timeout: float = 90.0) -> tuple[Any, WsServer]:
    if not port_free(port):
        raise CaptureError(f"tcp/{port} is in use on 127.0.0.1")
    live = None
    if ctx.keep_log:
        ctx.keep_log.mkdir(parents=True, exist_ok=True)
        live = ctx.keep_log / f"{name}.page-live.log"
        live.unlink(missing_ok=True)
    with tshark_capture(ctx.tshark, f"tcp port {port}", pcap):
        srv = WsServer(port, handler, deadline_s=timeout).start()
        try:
            res = run_in_chromium(pck, web_engine_dir(), timeout=timeout, live_log=live)
            srv.wait(10)
        finally:
            srv.stop()
    if ctx.keep_log:
        ctx.keep_log.mkdir(parents=True, exist_ok=True)
        (ctx.keep_log / f"{name}.page.txt").write_text("\n".join(res.lines) + "\n", encoding="utf-8")
        (ctx.keep_log / f"{name}.chromium.txt").write_text(res.chromium_log, encoding="utf-8")
    if res.kind != "exit" or res.payload != 0:
        tail = "\n".join(res.lines[-30:])
        raise CaptureError(f"{name}: the engine did not finish cleanly ({res.kind} {res.payload}):\n{tail}"
                           f"\nserver errors: {srv.errors}")
    if srv.errors:
        raise CaptureError(f"{name}: server errors: {srv.errors}")
    if len(srv.conns) != 1:
        raise CaptureError(f"{name}: expected one WebSocket connection, got {len(srv.conns)}")
    return res, srv


# --------------------------------------------------------------------------------------------------
# 1. godot4-websocket-put-var

G4 = "godot4"


def _ct(name: str) -> ContainerType:
    return ContainerType("builtin", name)


def put_var_replies() -> tuple[list[tuple[str, Any]], tuple[str, Any], list[tuple[str, Any]]]:
    """(label, value) the server sends: the first reply, the fragmented one, and the rest after __end__."""
    first = ("reply_welcome", {"msg": "welcome", "reply": 0, "server_tick": 5000, "spawn": Vector3(0, 1.5, -4)})
    state = {
        "tick": 7001,
        StringName("players"): [
            {"id": 1, "name": "host", "pos": Vector3(1, 0, -1), "rot": Quaternion(0, 0, 0, 1), "hp": 100},
            {"id": 1837465, "name": "p\u00e9lerin", "pos": Vector3(2.5, 0, 3.25), "hp": 0.5},
        ],
        "projectiles": PackedVector3Array([Vector3(1, 1, 1), Vector3(2, 2, 2)]),
        "target": NodePath("/root/Main/Enemy:position"),
    }
    after = [
        ("reply_state", state),
        ("reply_math", [Vector2i(-3, 4), Rect2i(Vector2i(0, 0), Vector2i(640, 480)), Vector4(1, 2, 3, 4),
                        AABB(Vector3(0, 0, 0), Vector3(1, 1, 1)), Transform3D(), Projection(),
                        Color(1, 0.5, 0, 1), WideInt(7), Float64(0.5), 0.1, 2 ** 40]),
        ("reply_typed_array", TypedArray(_ct("int"), [1, 2, 3])),
        ("reply_typed_dict", TypedDictionary(_ct("String"), _ct("int"), {"kills": 3, "deaths": 1})),
        ("reply_packed", [PackedVector4Array([Vector4(1, 2, 3, 4)]), PackedInt64Array([1, -(2 ** 40)]),
                          PackedColorArray([Color(0, 1, 0, 1)]), PackedStringArray(["a", "\u00e9t\u00e9"])]),
    ]
    frag = ("reply_fragmented", PackedStringArray([f"line {i:03d} " + "x" * 40 for i in range(60)]))
    return [first], frag, after


def put_var_handler(log: list[tuple[str, str, bytes]]) -> Callable[[WsConn], None]:
    """Our server: replies after the first message and after "__end__"; logs what it sent."""
    end = encode("__end__", G4)
    first, frag, after = put_var_replies()

    def send(conn: WsConn, label: str, data: bytes | str) -> None:
        conn.send(data)
        is_text = isinstance(data, str)
        log.append((label, "text" if is_text else "binary", data.encode() if is_text else data))

    def handler(conn: WsConn) -> None:
        n = 0
        while True:
            ev = conn.recv()
            if ev.opcode == OP_CLOSE:
                return
            n += 1
            if n == 1:
                for label, v in first:
                    send(conn, label, encode(v, G4))
            if ev.opcode == OP_BINARY and ev.payload == end:
                for label, v in after:
                    send(conn, label, encode(v, G4))
                data = encode(frag[1], G4)
                conn.send_fragmented(data, [len(data) // 4, len(data) // 2, 3 * len(data) // 4], ping_after=0)
                log.append((frag[0], "binary", data))
                send(conn, "reply_text", "server says: gg \u2713")
                send(conn, "reply_float32_20000", encode(PackedFloat32Array([i * 0.5 for i in range(20000)]), G4))
                send(conn, "bye", encode("__bye__", G4))

    return handler


def make_put_var(ctx: Ctx, name: str) -> dict[str, Any]:
    port = PUT_VAR_PORT
    pcap = ctx.out / f"{name}.pcapng"
    server_log: list[tuple[str, str, bytes]] = []
    pck = game_pck("ws_client.gd", {"port": port}, ("report.gd", "values.gd"))
    res, srv = run_session(ctx, name, port, pck, put_var_handler(server_log), pcap)
    conn = srv.conns[0]
    bad = engine_errors(res.err)
    if bad:
        raise CaptureError(f"{name}: engine errors:\n  " + "\n  ".join(bad[:30]))
    caps = cap_lines(res.out)
    fatal = [f for f in caps if f[0] == "FATAL"]
    if fatal:
        raise CaptureError(f"{name}: FATAL {unhex(fatal[0][1])}")
    info = [unhex(f[1]) for f in caps if f[0] == "INFO"]
    done = [f for f in caps if f[0] == "DONE"]
    if not done:
        raise CaptureError(f"{name}: no DONE line")
    client = (conn.peer[0], conn.peer[1])
    server = ("127.0.0.1", port)
    c2s, s2c = flow_name(client, server), flow_name(server, client)

    flows = pcap_ws_flows(ctx.tshark, pcap)
    if set(flows) != {c2s, s2c}:
        raise CaptureError(f"{name}: pcap flows {sorted(flows)}, expected {c2s} / {s2c}")
    wire_up, wire_down = flows[c2s].messages, flows[s2c].messages
    # the server's own view must be the pcap's (it is what it read / wrote)
    got = [(e.opcode, e.payload) for e in conn.messages if e.direction == "in"]
    if got != [(m.opcode, m.payload) for m in wire_up]:
        raise CaptureError(f"{name}: the server read other messages than the pcap holds")
    written = [(OP_TEXT if k == "text" else OP_BINARY, d) for _, k, d in server_log]
    if written != [(m.opcode, m.payload) for m in wire_down]:
        raise CaptureError(f"{name}: the server wrote other messages than the pcap holds")

    recs: list[dict[str, Any]] = []
    sent = [f for f in caps if f[0] == "SENT"]
    recv = [f for f in caps if f[0] == "RECV"]
    if len(sent) != len(wire_up):
        raise CaptureError(f"{name}: client printed {len(sent)} sends, the pcap has {len(wire_up)} messages")
    if len(recv) != len(wire_down):
        raise CaptureError(f"{name}: client printed {len(recv)} receives, the pcap has {len(wire_down)} messages")
    for f, m in zip(sent, wire_up, strict=True):
        idx, kind, label = int(f[1]), f[2], unhex(f[3])
        where = f"{c2s} #{idx} ({label})"
        if idx != len([r for r in recs if r["flow"] == c2s]):
            raise CaptureError(f"{where}: out of order")
        rec: dict[str, Any] = {"seq": 0, "flow": c2s, "index": idx, "_frame": m.pcap_frame}
        if kind == "text":
            text = unhex(f[4])
            if m.opcode != OP_TEXT or m.payload != text.encode("utf-8"):
                raise CaptureError(f"{where}: pcap has opcode {m.opcode} {m.payload[:40]!r}")
            rec.update(kind="text", api="WebSocketPeer.send_text", label=label, text=text, hex=m.payload.hex())
        else:
            if m.opcode != OP_BINARY:
                raise CaptureError(f"{where}: pcap has opcode {m.opcode}")
            fl = parse_fields(f[4:])
            # type/type_name/text: what a Godot receiver of these bytes gets (the engine's bytes_to_var of
            # its own var_to_bytes); sent_*: typeof/var_to_str of the value itself where they differ
            # (Objects travel as ids, a freed Object as null).
            rec.update(kind="variant", api="WebSocketPeer.put_var", label=label, type=fl["rt_type"],
                       type_name=fl["rt_type_name"])
            if fl["rt_type"] != fl["type"]:
                rec["sent_type"], rec["sent_type_name"] = fl["type"], fl["type_name"]
            if "hex" in fl:
                w = m.payload.hex()
                rec["text"] = fl["rt_text"]
                rec["hex"] = w
                if w != fl["hex"]:
                    if not padding_only_diff(w, fl["hex"], fl["text"]):
                        raise CaptureError(f"{where}: pcap {w[:80]} differs from var_to_bytes {fl['hex'][:80]}")
                    rec["sender_hex"] = fl["hex"]
                if fl["rt_text"] != fl["text"]:
                    rec["sent_text"] = fl["text"]
                if fl["oid"] != "-":
                    rec["sent_object_id"] = int(fl["oid"])
            else:
                if fl["size"] != len(m.payload) or fl["hex_sha256"] != hashlib.sha256(m.payload).hexdigest():
                    raise CaptureError(f"{where}: pcap bytes differ from the engine's digest")
                for k in ("size", "hex_sha256", "text_size", "text_sha256", "text_head"):
                    rec[k] = fl[k]
        recs.append(rec)
    labels = {i: lab for i, (lab, _, _) in enumerate(server_log)}
    for f, m in zip(recv, wire_down, strict=True):
        idx, kind, size, sha, pkt_hex = int(f[1]), f[2], int(f[3]), f[4].lower(), f[5].lower()
        where = f"{s2c} #{idx} ({labels.get(idx)})"
        if size != len(m.payload) or sha != hashlib.sha256(m.payload).hexdigest():
            raise CaptureError(f"{where}: the engine received other bytes than the pcap holds")
        if pkt_hex != "-" and pkt_hex != m.payload.hex():
            raise CaptureError(f"{where}: packet hex differs")
        rec = {"seq": 0, "flow": s2c, "index": idx, "_frame": m.pcap_frame}
        if kind == "text":
            if m.opcode != OP_TEXT:
                raise CaptureError(f"{where}: engine saw a text packet, pcap opcode {m.opcode}")
            rec.update(kind="text", api="(python server) -> WebSocketPeer.get_packet", label=labels[idx],
                       text=unhex(f[6]), hex=m.payload.hex())
        else:
            if m.opcode != OP_BINARY:
                raise CaptureError(f"{where}: pcap opcode {m.opcode}")
            used = int(f[6])
            if used != len(m.payload):
                raise CaptureError(f"{where}: the engine consumed {used} of {len(m.payload)} bytes")
            fl = parse_fields(f[7:])
            rec.update(kind="variant", api="(python server, godot_dissect.encode) -> WebSocketPeer.get_packet + "
                       "bytes_to_var", label=labels[idx], type=fl["type"], type_name=fl["type_name"])
            if "hex" in fl:
                rec["text"] = fl["text"]
                rec["hex"] = m.payload.hex()
                if fl["hex"] != rec["hex"]:
                    rec["recv_hex"] = fl["hex"]
            else:
                rec.update(size=len(m.payload), hex_sha256=sha, text_size=fl["text_size"],
                           text_sha256=fl["text_sha256"], text_head=fl["text_head"])
                if (fl["size"], fl["hex_sha256"]) != (len(m.payload), sha):
                    rec["recv_size"], rec["recv_hex_sha256"] = fl["size"], fl["hex_sha256"]
        if len(m.frames) > 1:
            rec["ws_frames"] = len(m.frames)
        recs.append(rec)
    for r in recs:
        r_m = (wire_up if r["flow"] == c2s else wire_down)[r["index"]]
        if len(r_m.frames) > 1 and "ws_frames" not in r:
            r["ws_frames"] = len(r_m.frames)
    finish_order(recs)
    tshark_check = tshark_ws_check(ctx.tshark, pcap, port, flows)
    write_golden(ctx.out / f"{name}.golden.jsonl", recs)
    close_code = int(done[0][1])
    return {
        "engine": engine_string(info),
        "messages": len(recs),
        "flows": flow_summary(recs, {c2s: "client->server (Godot WebSocketPeer)",
                                     s2c: "server->client (Python server, read by Godot)"}),
        "websocket": {k: ws_stats(v) for k, v in sorted(flows.items())},
        "close": {"initiator": "client", "code": close_code},
        "checks": tshark_check,
    }


# --------------------------------------------------------------------------------------------------
# 2. godot4-websocket-multiplayer

MP_PEER_ID = 1234567  # the id our server gives the client (WebSocketMultiplayerPeer: first message)
MP_OTHER_PEER = 5  # a peer the server announces (SYS ADD_PEER) so that the client uses the relay
CMD_NAMES = {0: "REMOTE_CALL", 1: "SIMPLIFY_PATH", 2: "CONFIRM_PATH", 3: "RAW", 4: "SPAWN", 5: "DESPAWN",
             6: "SYNC", 7: "SYS"}
SYS_NAMES = {0: "AUTH", 1: "ADD_PEER", 2: "DEL_PEER", 3: "RELAY"}


def rpc_methods(script: Path) -> list[str]:
    """The script's @rpc methods sorted by name: SceneMultiplayer's method ids (script methods)."""
    src = script.read_text(encoding="utf-8")
    return sorted(re.findall(r"^@rpc\b[^\n]*\n(?:static\s+)?func\s+(\w+)", src, re.M))


def rpc_md5(methods: list[str]) -> str:
    return hashlib.md5("".join(methods).encode()).hexdigest()


def mp_parse(p: bytes) -> dict[str, Any]:
    """One SceneMultiplayer packet, parsed here from the engine's own layout (Godot 4
    ``modules/multiplayer/scene_multiplayer.cpp`` and ``scene_rpc_interface.cpp``), independently of the spec."""
    cmd = p[0] & 7
    out: dict[str, Any] = {"command": CMD_NAMES[cmd]}
    if cmd == 0:
        node_comp, name_comp, byte_only = (p[0] >> 4) & 3, (p[0] >> 6) & 1, (p[0] >> 7) & 1
        pos = 1
        size = {0: 1, 1: 2, 2: 4}[node_comp]
        node_id = int.from_bytes(p[pos:pos + size], "little")
        pos += size
        msize = 2 if name_comp else 1
        method_id = int.from_bytes(p[pos:pos + msize], "little")
        pos += msize
        out.update(node_id_bytes=size, method_id=method_id, method_id_bytes=msize, byte_only=bool(byte_only))
        end = len(p)
        if size == 4 and node_id & 0x80000000:
            off = node_id & 0x7FFFFFFF
            path = p[off:]
            if not path.endswith(b"\0"):
                raise CaptureError(f"REMOTE_CALL path not NUL-terminated: {p.hex()}")
            out["node_path"] = path[:-1].decode("utf-8")
            end = off
        else:
            out["node_cache_id"] = node_id
        if byte_only:
            out["argc"] = 1 if end > pos else 0
            out["args_bytes"] = end - pos
        else:
            out["argc"] = p[pos]
            out["args_bytes"] = end - pos - 1
    elif cmd == 1:
        if p[33] != 0:
            raise CaptureError(f"SIMPLIFY_PATH md5 not NUL-terminated: {p.hex()}")
        path = p[38:]
        out.update(md5=p[1:33].decode("ascii"), cache_id=struct.unpack_from("<I", p, 34)[0],
                   node_path=path.rstrip(b"\0").decode("utf-8"))
    elif cmd == 2:
        out.update(valid=bool(p[1]), cache_id=struct.unpack_from("<I", p, 2)[0])
    elif cmd == 3:
        out.update(data_hex=p[1:].hex())
    elif cmd == 7:
        sub = p[1]
        out["sys"] = SYS_NAMES.get(sub, str(sub))
        if sub in (1, 2, 3):
            out["peer"] = struct.unpack_from("<i", p, 2)[0]
        if sub == 3:
            out["inner"] = mp_parse(p[6:])
    return out


def mp_simplify(md5: str, cache_id: int, path: str) -> bytes:
    return b"\x01" + md5.encode() + b"\0" + struct.pack("<I", cache_id) + path.encode() + b"\0"


def mp_handler(log: list[tuple[str, bytes]], md5: str) -> Callable[[WsConn], None]:
    """The stand-in server: peer id, CONFIRM_PATH for the client's SIMPLIFY_PATH (and a SIMPLIFY_PATH of
    its own for the same node and cache id, so that echoed calls with a cached node id resolve), every
    REMOTE_CALL to peer 1 sent back unchanged, a RAW reply, then ADD_PEER/DEL_PEER of peer 5."""

    def send(conn: WsConn, label: str, data: bytes) -> None:
        conn.send(data)
        log.append((label, data))

    def handler(conn: WsConn) -> None:
        send(conn, "peer_id", struct.pack("<i", MP_PEER_ID))
        simplified = False
        while True:
            ev = conn.recv()
            if ev.opcode == OP_CLOSE:
                return
            if ev.opcode != OP_BINARY:
                raise CaptureError(f"unexpected opcode {ev.opcode} from the client")
            p = ev.payload
            m = mp_parse(p)
            if m["command"] == "SIMPLIFY_PATH":
                if m["md5"] != md5:
                    raise CaptureError(f"client's rpc md5 {m['md5']} != {md5} (method ids would be wrong)")
                send(conn, "confirm_path", b"\x02\x01" + struct.pack("<I", m["cache_id"]))
                if not simplified:
                    send(conn, "simplify_path", mp_simplify(md5, m["cache_id"], m["node_path"]))
                    simplified = True
            elif m["command"] == "REMOTE_CALL":
                send(conn, "echo", p)
            elif m["command"] == "RAW":
                send(conn, "raw_reply", b"\x03" + "raw reply \u2713".encode())
                send(conn, "add_peer", b"\x07\x01" + struct.pack("<i", MP_OTHER_PEER))
            elif m["command"] == "SYS" and m.get("sys") == "RELAY" and m["inner"]["command"] == "REMOTE_CALL":
                send(conn, "del_peer", b"\x07\x02" + struct.pack("<i", MP_OTHER_PEER))

    return handler


def mp_calls(caps: list[list[str]], head: str) -> list[dict[str, Any]]:
    """CALL/GOT lines with the ARG lines after them."""
    out: list[dict[str, Any]] = []
    for f in caps:
        if f[0] == head:
            out.append({"i": int(f[1]), "peer": int(f[2]), "method": f[3], "argc": int(f[4]), "args": []})
        elif f[0] == "ARG" and out and len(out[-1]["args"]) < out[-1]["argc"]:
            fl = parse_fields(f[1:])
            out[-1]["args"].append(fl)
        elif f[0] in ("CALL", "GOT"):
            pass
    for c in out:
        if len(c["args"]) != c["argc"]:
            raise CaptureError(f"{head} {c['i']}: {len(c['args'])} ARG lines for argc {c['argc']}")
    return out


def arg_records(args: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for a in args:
        r = {"type": a["type"], "type_name": a["type_name"]}
        if "text" in a:
            r["text"] = a["text"]
            r["var_to_bytes"] = a["hex"]
        else:
            r.update(size=a["size"], hex_sha256=a["hex_sha256"], text_head=a["text_head"])
        out.append(r)
    return out


def call_text(method: str, args: list[dict[str, Any]]) -> str:
    return method + "(" + ", ".join(a.get("text", a.get("text_head", "") + "...") for a in args) + ")"


def wire_bytes(p: bytes) -> dict[str, Any]:
    """``hex``, or ``size`` + ``hex_sha256`` for messages larger than BIG bytes (as for big Variants)."""
    if len(p) > BIG:
        return {"size": len(p), "hex_sha256": hashlib.sha256(p).hexdigest()}
    return {"hex": p.hex()}


def make_multiplayer(ctx: Ctx, name: str) -> dict[str, Any]:
    port = MULTIPLAYER_PORT
    pcap = ctx.out / f"{name}.pcapng"
    methods = rpc_methods(PROJECT / "mp_client.gd")
    md5 = rpc_md5(methods)
    server_log: list[tuple[str, bytes]] = []
    pck = game_pck("mp_client.gd", {"port": port})
    res, srv = run_session(ctx, name, port, pck, mp_handler(server_log, md5), pcap)
    conn = srv.conns[0]
    bad = engine_errors(res.err)
    if bad:
        raise CaptureError(f"{name}: engine errors:\n  " + "\n  ".join(bad[:30]))
    caps = cap_lines(res.out)
    fatal = [f for f in caps if f[0] == "FATAL"]
    if fatal:
        raise CaptureError(f"{name}: FATAL {unhex(fatal[0][1])}")
    if not any(f[0] == "DONE" for f in caps):
        raise CaptureError(f"{name}: no DONE line")
    info = [unhex(f[1]) for f in caps if f[0] == "INFO"]
    ids = [int(f[1]) for f in caps if f[0] == "ID"]
    if ids != [MP_PEER_ID]:
        raise CaptureError(f"{name}: the client reports unique id {ids}, the server gave {MP_PEER_ID}")
    client, server = (conn.peer[0], conn.peer[1]), ("127.0.0.1", port)
    c2s, s2c = flow_name(client, server), flow_name(server, client)
    flows = pcap_ws_flows(ctx.tshark, pcap)
    if set(flows) != {c2s, s2c}:
        raise CaptureError(f"{name}: pcap flows {sorted(flows)}, expected {c2s} / {s2c}")
    up, down = flows[c2s].messages, flows[s2c].messages
    if [(e.opcode, e.payload) for e in conn.messages if e.direction == "in"] != [(m.opcode, m.payload) for m in up]:
        raise CaptureError(f"{name}: the server read other messages than the pcap holds")
    if [(OP_BINARY, d) for _, d in server_log] != [(m.opcode, m.payload) for m in down]:
        raise CaptureError(f"{name}: the server wrote other messages than the pcap holds")

    calls = mp_calls(caps, "CALL")
    gots = mp_calls(caps, "GOT")
    raw_sent = [f[1].lower() for f in caps if f[0] == "RAW_SENT"]
    raw_got = [(int(f[1]), f[2].lower()) for f in caps if f[0] == "RAW_GOT"]
    peers = [(f[1], int(f[2])) for f in caps if f[0] == "PEER"]
    calls_to = {p: [c for c in calls if c["peer"] == p] for p in (1, MP_OTHER_PEER)}
    if len(calls_to[1]) + len(calls_to[MP_OTHER_PEER]) != len(calls):
        raise CaptureError(f"{name}: calls to unexpected peers")

    recs: list[dict[str, Any]] = []
    api_c = "WebSocketMultiplayerPeer + SceneMultiplayer (client)"
    api_s = "stand-in server (python) -> WebSocketMultiplayerPeer + SceneMultiplayer (client)"

    def rpc_fields(m: dict[str, Any], call: dict[str, Any], who: str) -> dict[str, Any]:
        if methods[m["method_id"]] != call["method"]:
            raise CaptureError(f"method id {m['method_id']} = {methods[m['method_id']]}, "
                               f"the engine printed {call['method']}")
        if m["argc"] != call["argc"]:
            raise CaptureError(f"{call['method']}: argc {m['argc']} on the wire, {call['argc']} printed")
        node = {"node_path": m["node_path"]} if "node_path" in m else {"node_cache_id": m["node_cache_id"]}
        return {"text": call_text(call["method"], call["args"]), "method": call["method"],
                "method_id": m["method_id"], **node, "byte_only": m["byte_only"],
                "args": arg_records(call["args"]), "golden_source": who}

    ci = {1: 0, MP_OTHER_PEER: 0}
    for idx, w in enumerate(up):
        m = mp_parse(w.payload)
        rec: dict[str, Any] = {"seq": 0, "flow": c2s, "index": idx, "_frame": w.pcap_frame, "kind": "multiplayer",
                               "api": api_c, "command": m["command"]}
        where = f"{c2s} #{idx}"
        try:
            if m["command"] == "REMOTE_CALL":
                call = calls_to[1][ci[1]]
                ci[1] += 1
                rec.update(rpc_fields(m, call, "engine: the sender's prints (var_to_str/typeof of each argument)"))
            elif m["command"] == "SYS" and m["sys"] == "RELAY":
                inner = m["inner"]
                rec.update(sys="RELAY", relay_peer=m["peer"], inner_command=inner["command"])
                if inner["command"] == "REMOTE_CALL":
                    call = calls_to[MP_OTHER_PEER][ci[MP_OTHER_PEER]]
                    ci[MP_OTHER_PEER] += 1
                    rec.update(rpc_fields(inner, call, "engine: the sender's prints"))
                    rec["text"] = f"RELAY to {m['peer']}: " + rec["text"]
                else:
                    rec.update(text=f"RELAY to {m['peer']}: {inner['command']} {inner.get('node_path', '')}",
                               inner=inner, golden_source="protocol (parsed from the pcap; no engine print)")
            elif m["command"] == "RAW":
                if m["data_hex"] != raw_sent.pop(0):
                    raise CaptureError("RAW bytes differ from the engine's print")
                rec.update(text=f"RAW {bytes.fromhex(m['data_hex'])!r}", data_hex=m["data_hex"],
                           golden_source="engine: send_bytes() argument printed by the sender")
            elif m["command"] == "SIMPLIFY_PATH":
                if m["md5"] != md5:
                    raise CaptureError(f"md5 {m['md5']} != md5 of {methods}")
                rec.update(text=f"SIMPLIFY_PATH {m['node_path']} cache_id={m['cache_id']}", md5=m["md5"],
                           cache_id=m["cache_id"], node_path=m["node_path"], rpc_methods=methods,
                           golden_source="protocol (parsed from the pcap; md5 checked against the sorted @rpc names)")
            elif m["command"] == "CONFIRM_PATH":
                if not m["valid"]:
                    raise CaptureError("the engine rejected our SIMPLIFY_PATH (checksum)")
                rec.update(text=f"CONFIRM_PATH cache_id={m['cache_id']} valid={m['valid']}", valid=m["valid"],
                           cache_id=m["cache_id"], golden_source="protocol (the engine's answer to our SIMPLIFY_PATH)")
            else:
                raise CaptureError(f"unexpected client packet {m}")
        except (IndexError, KeyError) as e:
            raise CaptureError(f"{where}: {m} does not match the engine's prints ({e})") from None
        except CaptureError as e:
            raise CaptureError(f"{where}: {e}") from None
        rec.update(wire_bytes(w.payload))
        recs.append(rec)
    if ci[1] != len(calls_to[1]) or ci[MP_OTHER_PEER] != len(calls_to[MP_OTHER_PEER]) or raw_sent:
        raise CaptureError(f"{name}: the engine printed calls that are not in the pcap")

    gi = 0
    for idx, w in enumerate(down):
        label = server_log[idx][0]
        rec = {"seq": 0, "flow": s2c, "index": idx, "_frame": w.pcap_frame, "kind": "multiplayer", "api": api_s,
               "label": label}
        where = f"{s2c} #{idx} ({label})"
        if label == "peer_id":
            rec.update(command="PEER_ID", text=f"peer id {MP_PEER_ID}", peer_id=MP_PEER_ID,
                       golden_source="engine: multiplayer.get_unique_id() printed after connecting")
        else:
            m = mp_parse(w.payload)
            rec["command"] = m["command"]
            if m["command"] == "REMOTE_CALL":
                g = gots[gi]
                gi += 1
                if g["peer"] != 1:
                    raise CaptureError(f"{where}: remote sender {g['peer']}")
                rec.update(rpc_fields(m, g, "engine: the receiver's prints inside the called method"))
                rec["remote_sender_id"] = g["peer"]
            elif m["command"] == "RAW":
                frm, data = raw_got.pop(0)
                if data != m["data_hex"] or frm != 1:
                    raise CaptureError(f"{where}: RAW printed {frm} {data}, pcap {m['data_hex']}")
                rec.update(text=f"RAW {bytes.fromhex(data)!r}", data_hex=data,
                           golden_source="engine: peer_packet signal (sender id, bytes) printed by the receiver")
            elif m["command"] == "SYS":
                ev = "connected" if m["sys"] == "ADD_PEER" else "disconnected"
                if (ev, m["peer"]) not in peers:
                    raise CaptureError(f"{where}: the engine did not print peer {ev} {m['peer']}")
                rec.update(sys=m["sys"], peer=m["peer"], text=f"SYS {m['sys']} {m['peer']}",
                           golden_source=f"engine: peer_{ev} signal printed by the receiver")
            elif m["command"] == "SIMPLIFY_PATH":
                rec.update(text=f"SIMPLIFY_PATH {m['node_path']} cache_id={m['cache_id']}", md5=m["md5"],
                           cache_id=m["cache_id"], node_path=m["node_path"],
                           golden_source="protocol (ours; the engine accepted it: CONFIRM_PATH valid)")
            elif m["command"] == "CONFIRM_PATH":
                rec.update(text=f"CONFIRM_PATH cache_id={m['cache_id']} valid={m['valid']}", valid=m["valid"],
                           cache_id=m["cache_id"], golden_source="protocol (ours)")
            else:
                raise CaptureError(f"{where}: unexpected {m}")
        rec.update(wire_bytes(w.payload))
        recs.append(rec)
    if gi != len(gots) or raw_got:
        raise CaptureError(f"{name}: the engine printed receptions that are not in the pcap")
    finish_order(recs)
    tshark_check = tshark_ws_check(ctx.tshark, pcap, port, flows)
    write_golden(ctx.out / f"{name}.golden.jsonl", recs)
    commands: dict[str, dict[str, int]] = {}
    for r in recs:
        d = commands.setdefault(r["flow"], {})
        k = r["command"] + (f" {r['sys']}" if "sys" in r else "")
        d[k] = d.get(k, 0) + 1
    return {
        "engine": engine_string(info),
        "messages": len(recs),
        "flows": flow_summary(recs, {c2s: "client->server (Godot SceneMultiplayer over WebSocketMultiplayerPeer)",
                                     s2c: "server->client (Python stand-in server, read by Godot)"}),
        "commands": commands,
        "rpc_methods": methods,
        "rpc_md5": md5,
        "peer_id": MP_PEER_ID,
        "websocket": {k: ws_stats(v) for k, v in sorted(flows.items())},
        "checks": tshark_check,
    }


# --------------------------------------------------------------------------------------------------
# writing


def finish_order(recs: list[dict[str, Any]]) -> None:
    """seq = order of the messages' last bytes in the pcap (then flow, index)."""
    recs.sort(key=lambda r: (r["_frame"], r["flow"], r["index"]))
    for i, r in enumerate(recs):
        r.pop("_frame")
        r["seq"] = i
    recs[:] = [order_keys(r) for r in recs]


KEY_ORDER = ("seq", "flow", "index", "kind", "api", "label", "command", "type", "type_name", "text", "hex", "size",
             "hex_sha256", "text_size", "text_sha256", "text_head")


def order_keys(r: dict[str, Any]) -> dict[str, Any]:
    out = {k: r[k] for k in KEY_ORDER if k in r}
    out.update({k: v for k, v in r.items() if k not in out})
    return out


def write_golden(path: Path, recs: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for r in recs:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def update_manifest(out: Path, name: str, entry: dict[str, Any]) -> None:
    path = out / "manifest.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    data[name] = entry
    path.write_text(json.dumps(dict(sorted(data.items())), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def flow_summary(recs: list[dict[str, Any]], directions: dict[str, str]) -> list[dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for r in recs:
        e = out.setdefault(r["flow"], {"flow": r["flow"], "messages": 0, "direction": directions.get(r["flow"], "")})
        e["messages"] += 1
        k = r.get("kind", "variant")
        e[k + "_messages"] = e.get(k + "_messages", 0) + 1
    return list(out.values())


def engine_string(info: list[str]) -> str:
    for s in info:
        if s.startswith("engine "):
            return "Godot " + s[len("engine "):] + " web export template (wasm32, single precision), headless Chromium"
    return "Godot 4 web export template"


def pcap_packets(tshark: str, pcap: Path) -> int:
    return len(tshark_fields(tshark, pcap, ["frame.number"], "frame"))


CAPTURES: dict[str, Callable[[Ctx, str], dict[str, Any]]] = {
    "godot4-websocket-put-var": make_put_var,
    "godot4-websocket-multiplayer": make_multiplayer,
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", action="append", choices=sorted(CAPTURES), help="make only this capture (repeatable)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--keep-log", type=Path, help="write the page's output and Chromium's log here")
    o = ap.parse_args(argv)
    tshark = shutil.which("tshark")
    if tshark is None:
        print("tshark not found (apt-get install -y tshark)", file=sys.stderr)
        return 2
    chromium = find_chromium()
    if chromium is None:
        print("chromium not found (apt-get install -y chromium)", file=sys.stderr)
        return 2
    ensure_installed("godot4")
    ver = subprocess.run([chromium, "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
    o.out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name in o.only or list(CAPTURES):
        t0 = time.monotonic()
        print(f"{name} ...", flush=True)
        try:
            with tempfile.TemporaryDirectory(prefix="gdx4-") as tmp:
                tmp_ctx = Ctx(tshark, Path(tmp), o.keep_log, ver)
                info = CAPTURES[name](tmp_ctx, name)
                pcap = Path(tmp) / f"{name}.pcapng"
                golden = Path(tmp) / f"{name}.golden.jsonl"
                packets = pcap_packets(tshark, pcap)
                shutil.copyfile(pcap, o.out / pcap.name)
                shutil.copyfile(golden, o.out / golden.name)
                (o.out / pcap.name).chmod(0o644)
        except CaptureError as e:
            failed += 1
            print(f"  FAILED: {e}", file=sys.stderr)
            continue
        entry = {
            "pcap": f"{name}.pcapng",
            "golden": f"{name}.golden.jsonl",
            "description": DESCRIPTIONS[name],
            "engine": info.pop("engine"),
            "browser": ver,
            "pcap_bytes": (o.out / f"{name}.pcapng").stat().st_size,
            "packets": packets,
            **info,
        }
        update_manifest(o.out, name, entry)
        print(f"  ok: {entry['messages']} messages, {packets} packets, {entry['pcap_bytes']} bytes "
              f"({time.monotonic() - t0:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
