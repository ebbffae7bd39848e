"""ENet (``godot_dissect.enet``) against real bytes.

Truth comes from outside our code: the real Godot 3.2.3 capture made by the project's capture
script (its golden lines hold what the engines sent and received), datagrams recorded live between
two Godot 3.2.3 peers for every compression mode (with what each engine printed it received), and
the real ENet library (``libenet.so.7``, the ENet Debian's godot3-server runs on) for command sizes
and the range coder. Hypothesis covers build/parse round trips of every command.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import hashlib
import json
import os
import random
import select
import shutil
import socket
import struct
import subprocess
import threading
import tracemalloc
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from godot_dissect import enet as E
from godot_dissect.enet import compression, rangecoder
from godot_dissect.enet.build import fragment_length
from godot_dissect.enet.checks import first_failure
from godot_dissect.pcap.packets import segments
from godot_dissect.spec import enet as spec

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ROOT / "captures"
MP3 = "godot3-enet-multiplayer"


# --- shared helpers ----------------------------------------------------------------------------------

def udp_datagrams(path: Path) -> list[tuple[int, float, str, bytes]]:
    """(frame, time, flow, payload) of every UDP datagram, flow as the golden files write it."""
    return [(s.frame, s.time, f"udp {s.src}:{s.sport} -> {s.dst}:{s.dport}", s.payload)
            for s in segments(str(path)) if s.proto == "udp"]


def reverse(flow: str) -> str:
    proto, a, _, b = flow.split(" ")
    return f"{proto} {b} -> {a}"


def reassemble(datagrams: list[tuple[int, float, str, bytes]], compression_mode: str | None = None,
               ) -> tuple[dict[str, list[E.Payload]], dict[str, E.EnetReassembler]]:
    by_flow: dict[str, list[E.Payload]] = defaultdict(list)
    rs: dict[str, E.EnetReassembler] = {}
    for frame, time, flow, data in datagrams:
        dg = E.parse_datagram(data, compression=compression_mode)
        by_flow[flow] += rs.setdefault(flow, E.EnetReassembler()).feed(dg, frame, time)
    return by_flow, rs


@pytest.fixture(scope="module")
def mp3() -> dict[str, Any]:
    pcap = CAPTURES / f"{MP3}.pcapng"
    if not pcap.exists():
        pytest.skip(f"{pcap.name} not made yet (tools/captures/make_multiplayer_captures.py)")
    golden = [json.loads(line) for line in (CAPTURES / f"{MP3}.golden.jsonl").read_text().splitlines() if line]
    return {"datagrams": udp_datagrams(pcap), "golden": golden}


def libenet() -> ctypes.CDLL:
    name = ctypes.util.find_library("enet") or "libenet.so.7"
    try:
        return ctypes.CDLL(name)
    except OSError:
        pytest.skip("the ENet library (libenet7, a dependency of godot3-server) is not installed")


# --- the spec against the real ENet ----------------------------------------------------------------

def test_command_sizes_are_enet_s_own() -> None:
    lib = libenet()
    size = lib.enet_protocol_command_size
    size.restype, size.argtypes = ctypes.c_size_t, [ctypes.c_uint8]
    assert size(spec.COMMAND_NONE) == 0
    for c in spec.COMMANDS:
        assert size(c.number) == c.size, c.name
        assert size(c.number | 0xF0) == c.size, "ENet masks the flag bits off"
    assert {c.number for c in spec.COMMANDS} == set(range(1, spec.COMMAND_COUNT))


# --- the Godot 3.2.3 multiplayer capture -----------------------------------------------------------

def test_every_datagram_of_the_capture_parses_and_rebuilds(mp3: dict[str, Any]) -> None:
    assert len(mp3["datagrams"]) > 100
    for frame, _, _, data in mp3["datagrams"]:
        dg = E.parse_datagram(data)
        assert dg.error is None, f"frame {frame}: {dg.error}"
        assert dg.commands and not dg.compressed
        assert sum(c.size for c in dg.commands) + dg.header_size == len(data)
        assert E.rebuild(dg) == data, f"frame {frame}"
        assert E.build_datagram(dg.peer_id, dg.commands, dg.sent_time, dg.session_id) == data
        assert E.looks_like_enet(data), f"frame {frame}"


def test_every_reliable_command_is_acknowledged_by_the_peer(mp3: dict[str, Any]) -> None:
    """The peer's ENet ACKs each reliable command with its channel and reliable_seq and echoes the
    sent time of the datagram that carried it: that checks our reading of both sides."""
    sent: dict[str, dict[tuple[int, int], set[int]]] = defaultdict(lambda: defaultdict(set))
    acks: dict[str, set[tuple[int, int, int]]] = defaultdict(set)
    for _, _, flow, data in mp3["datagrams"]:
        dg = E.parse_datagram(data)
        for c in dg.commands:
            if c.ack_requested:
                assert dg.sent_time is not None
                if c.name != "CONNECT":  # answered by VERIFY_CONNECT, not by an ACK
                    sent[flow][(c.channel, c.reliable_seq)].add(dg.sent_time)
            if c.name == "ACKNOWLEDGE":
                assert c.reliable_seq == c["received_reliable_seq"]
                acks[flow].add((c.channel, c["received_reliable_seq"], c["received_sent_time"]))
    assert sent
    for flow, commands in sent.items():
        for (channel, seq), times in commands.items():
            echoed = {t for ch, s, t in acks[reverse(flow)] if (ch, s) == (channel, seq)}
            assert echoed & times, f"{flow}: channel {channel} seq {seq} sent at {times}, acks echo {echoed}"


def test_connect_pairs_and_godot_fingerprints(mp3: dict[str, Any]) -> None:
    """CONNECT carries the client's unique id (the engines printed it) and channel count 3 (Godot 3)."""
    connects, verifies = {}, {}
    for _, _, flow, data in mp3["datagrams"]:
        dg = E.parse_datagram(data)
        for c in dg.commands:
            if c.name == "CONNECT":
                assert dg.peer_id == spec.UNASSIGNED_PEER_ID
                connects[flow] = c
            elif c.name == "VERIFY_CONNECT":
                verifies[flow] = c
    assert len(connects) == 2  # two clients
    client_ids = {g["receiver_id"] for g in mp3["golden"]
                  if g.get("receiver_role", "").startswith("client") and g["golden_source"].startswith("engine")}
    assert {c["data"] for c in connects.values()} == client_ids
    for flow, c in connects.items():
        v = verifies[reverse(flow)]
        assert v["connect_id"] == c["connect_id"]
        assert E.godot_major_from_connect(c) == 3 and E.godot_major_from_connect(v) == 3


def _matches(payload: E.Payload, g: dict[str, Any]) -> bool:
    if "hex" in g:
        return payload.data.endswith(bytes.fromhex(g["hex"]))
    return hashlib.sha256(payload.data[-g["size"]:]).hexdigest() == g["hex_sha256"]


def test_reassembled_packets_are_what_the_engines_exchanged(mp3: dict[str, Any]) -> None:
    """One payload per golden packet and none left over: fragments joined, retransmissions once."""
    by_flow, rs = reassemble(mp3["datagrams"])
    got: dict[tuple[str, int, int | None], list[E.Payload]] = defaultdict(list)
    for flow, payloads in by_flow.items():
        for p in payloads:
            assert p.error is None, p.error
            got[(flow, p.frame, p.channel)].append(p)
    fragmented = 0
    for g in mp3["golden"]:
        cands = got[(g["flow"], g["frame"], g["enet_channel"])]
        hit = next((p for p in cands if _matches(p, g)), None)
        assert hit is not None, f"golden seq {g['seq']} ({g['command']}) not delivered"
        cands.remove(hit)
        fragmented += hit.fragments > 1
    assert not [k for k, v in got.items() if v], "payloads the golden does not list"
    assert fragmented >= 2
    for r in rs.values():
        assert r.finish() == []


def test_retransmitted_datagrams_are_delivered_once(mp3: dict[str, Any]) -> None:
    once, _ = reassemble(mp3["datagrams"])
    doubled = [d for d in mp3["datagrams"] for _ in range(2)]
    twice, rs = reassemble(doubled)
    assert {f: [p.data for p in v] for f, v in twice.items()} == {f: [p.data for p in v] for f, v in once.items()}
    assert sum(r.duplicates for r in rs.values()) > 0


def test_a_lost_fragment_is_reported_when_the_conversation_ends(mp3: dict[str, Any]) -> None:
    frames = {f for f, _, _, data in mp3["datagrams"]
              if any(c.name == "SEND_FRAGMENT" for c in E.parse_datagram(data).commands)}
    lost = min(frames)
    by_flow, rs = reassemble([d for d in mp3["datagrams"] if d[0] != lost])
    errors = [p for r in rs.values() for p in r.finish()]
    assert len(errors) == 1 and "incomplete SEND_FRAGMENT group" in (errors[0].error or "")
    assert errors[0].data == b""
    complete, _ = reassemble(mp3["datagrams"])
    assert sum(map(len, complete.values())) == sum(map(len, by_flow.values())) + 1


def test_other_godot_udp_traffic_does_not_look_like_enet() -> None:
    pcap = CAPTURES / "godot3-udp-all-types.pcapng"
    datagrams = udp_datagrams(pcap)
    assert datagrams
    for frame, _, _, data in datagrams:
        assert not E.looks_like_enet(data), f"frame {frame}"


# --- live Godot 3.2.3 peers, every compression mode ------------------------------------------------

_PEERS_GD = r"""
extends SceneTree
# One NetworkedMultiplayerENet server + client per compression mode, all in this process. Each
# client reaches its server through the test's UDP relay (which records the datagrams); both sides
# print every packet they receive.
var pairs = []
var t0 = 0

func _init():
	var cfg = JSON.parse(OS.get_environment("ENET_TEST_PAIRS")).result
	for c in cfg:
		var srv = NetworkedMultiplayerENet.new()
		srv.compression_mode = int(c["mode"])
		srv.set_bind_ip("127.0.0.1")
		var e1 = srv.create_server(int(c["server_port"]), 2)
		var cli = NetworkedMultiplayerENet.new()
		cli.compression_mode = int(c["mode"])
		var e2 = cli.create_client("127.0.0.1", int(c["relay_port"]))
		print("START\t%d\t%d\t%d" % [int(c["mode"]), e1, e2])
		pairs.append({"mode": int(c["mode"]), "srv": srv, "cli": cli, "sent": -1})
	t0 = OS.get_ticks_msec()

func _pattern(n, mul, add):
	var b = PoolByteArray()
	b.resize(n)
	for i in range(n):
		b[i] = (i * mul + (i / 7) * add) % 256
	return b

func _send(p, mode, target, data):
	p.transfer_mode = mode
	p.set_target_peer(target)
	p.put_packet(data)

func _drain(p, mode, side):
	while p.get_available_packet_count() > 0:
		var ch = p.get_packet_channel()
		var data = p.get_packet()
		print("RECV\t%d\t%s\t%d\t%s" % [mode, side, ch, data.hex_encode()])

func _idle(_delta):
	var now = OS.get_ticks_msec()
	var busy = false
	for pair in pairs:
		var srv = pair["srv"]
		var cli = pair["cli"]
		srv.poll()
		cli.poll()
		var m = pair["mode"]
		if pair["sent"] < 0 and cli.get_connection_status() == NetworkedMultiplayerPeer.CONNECTION_CONNECTED:
			pair["sent"] = now
			for i in range(3):
				_send(cli, NetworkedMultiplayerPeer.TRANSFER_MODE_RELIABLE, 1, ("reliable %d, %d" % [i, m]).to_utf8())
				_send(cli, NetworkedMultiplayerPeer.TRANSFER_MODE_UNRELIABLE, 1, ("unsequenced %d" % i).to_utf8())
				_send(cli, NetworkedMultiplayerPeer.TRANSFER_MODE_UNRELIABLE_ORDERED, 1, ("ordered %d" % i).to_utf8())
			_send(cli, NetworkedMultiplayerPeer.TRANSFER_MODE_RELIABLE, 1, _pattern(5000, 7, 3))
			_send(cli, NetworkedMultiplayerPeer.TRANSFER_MODE_UNRELIABLE, 1, _pattern(3100, 13, 5))
			_send(srv, NetworkedMultiplayerPeer.TRANSFER_MODE_RELIABLE, 0, ("hello from server %d" % m).to_utf8())
			_send(srv, NetworkedMultiplayerPeer.TRANSFER_MODE_RELIABLE, 0, _pattern(2900, 3, 11))
		_drain(srv, m, "server")
		_drain(cli, m, "client")
		if pair["sent"] < 0 or now - pair["sent"] < 1500:
			busy = true
	if not busy or now - t0 > 20000:
		for pair in pairs:
			pair["cli"].close_connection()
			pair["srv"].close_connection()
		print("DONE")
		quit()
"""


class _Relay:
    """client <-> relay_port ... upstream socket <-> server_port; records every datagram."""

    def __init__(self, server_port: int) -> None:
        self.down = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.down.bind(("127.0.0.1", 0))
        self.up = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.up.bind(("127.0.0.1", 0))
        self.server = ("127.0.0.1", server_port)
        self.client: tuple[str, int] | None = None
        self.port = self.down.getsockname()[1]
        self.datagrams: list[tuple[str, bytes]] = []

    def pump(self, ready: list[socket.socket]) -> None:
        if self.down in ready:
            data, self.client = self.down.recvfrom(65535)
            self.datagrams.append(("c2s", data))
            self.up.sendto(data, self.server)
        if self.up in ready:
            data, _ = self.up.recvfrom(65535)
            self.datagrams.append(("s2c", data))
            if self.client is not None:
                self.down.sendto(data, self.client)


_PORTS_GIVEN: set[int] = set()  # (free when probed, but maybe not yet bound by the engine)


def _free_udp_port() -> int:
    """A free port below the kernel's ephemeral range: one handed out by bind(port 0) could be given again
    to the relay's own sockets or to a Godot client before the Godot server binds it (a CI run failed so:
    create_server returned ERR_CANT_CREATE)."""
    low = 32768
    with contextlib.suppress(OSError, ValueError):
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    rnd = random.Random()
    for _ in range(1000):
        port = rnd.randrange(10_000, max(low, 10_001))
        if port in _PORTS_GIVEN:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            _PORTS_GIVEN.add(port)
            return port
    raise RuntimeError("no free UDP port below the ephemeral range")


@pytest.fixture(scope="module")
def live_compression(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    godot = shutil.which(os.environ.get("GODOT3", "godot3-server"))
    if godot is None:
        pytest.skip("godot3-server not installed (scripts/setup.sh installs it)")
    work = tmp_path_factory.mktemp("enet_live")
    (work / "project.godot").write_text('config_version=4\n[application]\nconfig/name="enet-live"\n')
    (work / "peers.gd").write_text(_PEERS_GD.lstrip())
    relays = {c.godot_value: _Relay(_free_udp_port()) for c in spec.COMPRESSIONS}
    pairs = [{"mode": m, "server_port": r.server[1], "relay_port": r.port} for m, r in relays.items()]
    env = {**os.environ, "ENET_TEST_PAIRS": json.dumps(pairs)}
    stop = threading.Event()
    socks = [s for r in relays.values() for s in (r.down, r.up)]

    def run_relays() -> None:
        while not stop.is_set():
            ready, _, _ = select.select(socks, [], [], 0.05)
            for r in relays.values():
                r.pump(ready)

    t = threading.Thread(target=run_relays, daemon=True)
    t.start()
    try:
        proc = subprocess.run([godot, "--path", str(work), "-s", "peers.gd"], env=env, capture_output=True,
                              text=True, timeout=60, cwd=work)
    finally:
        stop.set()
        t.join()
        for s in socks:
            s.close()
    assert "DONE" in proc.stdout, proc.stdout + proc.stderr
    received: dict[int, dict[str, list[tuple[int, bytes]]]] = defaultdict(lambda: defaultdict(list))
    for line in proc.stdout.splitlines():
        parts = line.split("\t")
        if parts[0] == "START":
            assert parts[2:] == ["0", "0"], line
        if parts[0] == "RECV":
            received[int(parts[1])][parts[2]].append((int(parts[3]), bytes.fromhex(parts[4])))
    return {"relays": relays, "received": received}


def _live_flows(relay: _Relay) -> list[tuple[int, float, str, bytes]]:
    return [(i + 1, 0.0, direction, data) for i, (direction, data) in enumerate(relay.datagrams)]


@pytest.mark.parametrize("mode", [c.name for c in spec.COMPRESSIONS if c.name != "zstd"])
def test_live_godot_traffic_decompresses_and_reassembles(live_compression: dict[str, Any], mode: str) -> None:
    """Every datagram two Godot 3.2.3 peers sent each other with this compression mode parses;
    the packets reassembled from them are exactly those each engine printed it received."""
    value = spec.COMPRESSIONS_BY_NAME[mode].godot_value
    datagrams = _live_flows(live_compression["relays"][value])
    compressed = 0
    for frame, _, _, data in datagrams:
        dg = E.parse_datagram(data, compression=mode)
        assert dg.error is None, f"{mode} datagram {frame}: {dg.error}"
        assert E.rebuild(dg) == data
        compressed += dg.compressed
        assert dg.commands
        if dg.compressed and mode in ("range_coder", "zlib"):  # our encoders write the engine's bytes
            assert compression.compress(dg.decompressed or b"", mode) == dg.body
    if mode == "none":
        assert compressed == 0
    else:
        assert compressed >= 5, "the big packets compress"
    by_flow, rs = reassemble(datagrams, mode)
    received = live_compression["received"][value]
    for direction, receiver in (("c2s", "server"), ("s2c", "client")):
        ours = sorted((p.channel, p.data[8:]) for p in by_flow[direction] if p.channel)  # 8: Godot 3.2 header
        theirs = sorted(received[receiver])
        assert ours == theirs, f"{mode} {direction}"
    assert all(r.finish() == [] for r in rs.values())


def test_live_compressed_datagrams_without_the_codec_are_shown_as_compressed(
        live_compression: dict[str, Any]) -> None:
    for c in spec.COMPRESSIONS[1:]:
        shown = 0
        for frame, _, _, data in _live_flows(live_compression["relays"][c.godot_value]):
            dg = E.parse_datagram(data)
            if dg.compressed:
                shown += 1
                assert dg.error is None and dg.opaque and dg.commands == []
                [p] = E.EnetReassembler().feed(dg, frame, 0.0)
                assert p.delivery == "compressed" and p.data == dg.body and p.error
                # the wrong codec is an error with an offset, never an exception
                other = "zlib" if c.name != "zlib" else "range_coder"
                bad = E.parse_datagram(data, compression=other)
                assert bad.error is not None or bad.commands
        assert shown >= 5, c.name  # the big packets went compressed with every codec


def test_live_zstd_is_decoded_or_named(live_compression: dict[str, Any]) -> None:
    datagrams = _live_flows(live_compression["relays"][spec.COMPRESSIONS_BY_NAME["zstd"].godot_value])
    compressed = [E.parse_datagram(d, compression="zstd") for _, _, _, d in datagrams]
    compressed = [dg for dg in compressed if dg.compressed]
    assert compressed
    for dg in compressed:
        assert dg.error is None or "zstandard" in dg.error.reason
    try:
        import zstandard  # noqa: F401
    except ImportError:
        return  # the optional codec is missing: named, as checked above
    # with the codec installed: the packets are exactly those the engines printed they received
    assert all(dg.error is None for dg in compressed)
    by_flow, rs = reassemble(datagrams, "zstd")
    received = live_compression["received"][spec.COMPRESSIONS_BY_NAME["zstd"].godot_value]
    for direction, receiver in (("c2s", "server"), ("s2c", "client")):
        ours = sorted((p.channel, p.data[8:]) for p in by_flow[direction] if p.channel)  # 8: Godot 3.2 header
        assert ours == sorted(received[receiver]), (direction, len(ours))
    assert all(r.finish() == [] for r in rs.values())


# --- the range coder against ENet's own ------------------------------------------------------------

class _ENetBuffer(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dataLength", ctypes.c_size_t)]


def _enet_range_coder() -> tuple[Any, Any]:
    lib = libenet()
    lib.enet_range_coder_create.restype = ctypes.c_void_p
    ctx = lib.enet_range_coder_create()
    comp = lib.enet_range_coder_compress
    comp.restype = ctypes.c_size_t
    comp.argtypes = [ctypes.c_void_p, ctypes.POINTER(_ENetBuffer), ctypes.c_size_t, ctypes.c_size_t,
                     ctypes.c_char_p, ctypes.c_size_t]
    dec = lib.enet_range_coder_decompress
    dec.restype = ctypes.c_size_t
    dec.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]

    def compress(data: bytes) -> bytes:
        buf = ctypes.create_string_buffer(data, len(data))
        b = _ENetBuffer(ctypes.cast(buf, ctypes.c_void_p), len(data))
        out = ctypes.create_string_buffer(2 * len(data) + 64)
        n = comp(ctx, ctypes.byref(b), 1, len(data), out, len(out))
        return out.raw[:n]

    def decompress(data: bytes, limit: int) -> bytes:
        out = ctypes.create_string_buffer(limit)
        n = dec(ctx, data, len(data), out, limit)
        return out.raw[:n]

    return compress, decompress


_packetish = st.one_of(
    st.binary(min_size=1, max_size=1400),
    st.lists(st.sampled_from([b"\x86\x01\x00", b"Main", b"\x00\x00\x00\x00", b"hp", b"\xff"]), min_size=1,
             max_size=300).map(b"".join),
)


@given(_packetish)
def test_range_coder_matches_enet_byte_for_byte(data: bytes) -> None:
    enet_compress, _ = _enet_range_coder()
    packed = enet_compress(data)
    assert rangecoder.compress(data) == packed
    assert rangecoder.decompress(packed, spec.MAX_MTU) == data


@given(st.binary(min_size=1, max_size=80), st.integers(1, 64))
def test_range_decoder_fails_where_enet_s_fails(garbage: bytes, limit: int) -> None:
    _, enet_decompress = _enet_range_coder()
    theirs = enet_decompress(garbage, limit)
    try:
        ours = rangecoder.decompress(garbage, limit)
    except rangecoder.RangeCoderError:
        ours = b""
    assert ours == theirs


# --- build/parse round trips ----------------------------------------------------------------------

_MAX = {"B": 0xFF, "H": 0xFFFF, "I": 0xFFFFFFFF}


@st.composite
def commands(draw: st.DrawFn, d: spec.CommandDef) -> E.Command:
    """A command ENet would accept: fields in range, data commands on a real channel, fragment
    fields consistent (the spec's checks hold)."""
    fields = {f.name: draw(st.integers(0, _MAX[f.letter])) for f in d.fields}
    data = draw(st.binary(max_size=300)) if d.data_length else None
    if d.delivery:
        channel = draw(st.integers(0, spec.MAX_CHANNEL_COUNT - 1))
    else:  # ACKs carry the acked command's channel; the other control commands the control channel
        channel = draw(st.integers(0, 255)) if d.name == "ACKNOWLEDGE" else spec.CONTROL_CHANNEL
    if d.fragment_key:
        count = draw(st.integers(1, 2000))
        if d.name == "SEND_FRAGMENT" and not data:
            data = b"\x00"
        offset = draw(st.integers(0, 100_000))
        fields.update(fragment_count=count, fragment_number=draw(st.integers(0, count - 1)), fragment_offset=offset,
                      total_length=max(count, offset + len(data or b"") + draw(st.integers(0, 1000)), offset + 1))
    if "channel_count" in fields:
        fields["channel_count"] = draw(st.integers(spec.MIN_CHANNEL_COUNT, spec.MAX_CHANNEL_COUNT))
        fields["mtu"] = draw(st.integers(spec.MIN_MTU, spec.MAX_MTU))
        fields["window_size"] = draw(st.integers(spec.MIN_WINDOW_SIZE, spec.MAX_WINDOW_SIZE))
    if d.data_length:
        fields[d.data_length] = len(data or b"")
    flags = draw(st.sampled_from(d.sent_flags))
    cmd = E.Command(d.number, channel, draw(st.integers(0, 0xFFFF)), fields, data, flags)
    assert first_failure(d.checks, {**fields, "channel": channel, "reliable_seq": cmd.reliable_seq}) is None
    return cmd


_NOT_CONNECT = [c for c in spec.COMMANDS if c.name != "CONNECT"]


@given(st.lists(st.sampled_from(_NOT_CONNECT).flatmap(commands), min_size=1, max_size=6),
       st.integers(0, spec.MAX_PEER_ID - 1), st.integers(0, 3), st.none() | st.integers(0, 0xFFFF))
def test_build_parse_round_trip(cmds: list[E.Command], peer_id: int, session: int, sent_time: int | None) -> None:
    if sent_time is None and any(c.ack_requested for c in cmds):
        sent_time = 0  # ENet always sends the sent time with commands that want an ACK
    data = E.build_datagram(peer_id, cmds, sent_time, session)
    dg = E.parse_datagram(data)
    assert dg.error is None
    assert (dg.peer_id, dg.session_id, dg.sent_time, dg.compressed) == (peer_id, session, sent_time, False)
    assert [(c.number, c.channel, c.reliable_seq, c.flags, c.fields, c.data) for c in dg.commands] == \
           [(c.number, c.channel, c.reliable_seq, c.flags, c.fields, c.data) for c in cmds]
    assert E.rebuild(dg) == data
    assert E.looks_like_enet(data)


@given(commands(spec.COMMANDS_BY_NAME["CONNECT"]), st.integers(0, 0xFFFF))
def test_connect_round_trip(cmd: E.Command, sent_time: int) -> None:
    data = E.build_datagram(spec.UNASSIGNED_PEER_ID, [cmd], sent_time)
    dg = E.parse_datagram(data)
    assert dg.error is None and dg.commands[0].fields == cmd.fields
    assert E.godot_major_from_connect(dg.commands[0]) == spec.GODOT_MAJOR_BY_CHANNEL_COUNT.get(cmd["channel_count"])


@given(st.sampled_from(["range_coder", "zlib"]), st.lists(st.sampled_from(_NOT_CONNECT).flatmap(commands),
                                                            min_size=1, max_size=4))
def test_compressed_round_trip(mode: str, cmds: list[E.Command]) -> None:
    body = b"".join(E.build_command_bytes(c) for c in cmds)
    data = E.build_datagram(1, [], 7, compressed_body=compression.compress(body, mode))
    dg = E.parse_datagram(data, compression=mode)
    assert dg.error is None and dg.decompressed == body
    assert [c.fields for c in dg.commands] == [c.fields for c in cmds]
    assert E.rebuild(dg) == data


def test_builders_make_what_enet_sends(mp3: dict[str, Any]) -> None:
    """The per-command builders give the capture's bytes back from the parsed values."""
    rebuilt = {}
    for _, _, _, data in mp3["datagrams"]:
        dg = E.parse_datagram(data)
        for c in dg.commands:
            f = c.fields
            if c.name == "CONNECT":
                b = E.connect(f["outgoing_peer_id"], f["connect_id"], f["data"], f["channel_count"],
                              reliable_seq=c.reliable_seq, mtu=f["mtu"], window_size=f["window_size"])
            elif c.name == "ACKNOWLEDGE":
                b = E.acknowledge(c.channel, f["received_reliable_seq"], f["received_sent_time"])
            elif c.name == "PING":
                b = E.ping(c.reliable_seq)
            elif c.name == "SEND_RELIABLE":
                b = E.send_reliable(c.channel, c.reliable_seq, c.data or b"")
            elif c.name == "SEND_UNRELIABLE":
                b = E.send_unreliable(c.channel, c.reliable_seq, f["unreliable_seq"], c.data or b"")
            elif c.name == "SEND_UNSEQUENCED":
                b = E.send_unsequenced(c.channel, f["unsequenced_group"], c.data or b"")
            elif c.name == "SEND_FRAGMENT":
                b = E.send_fragment(c.channel, c.reliable_seq, f["start_seq"], f["fragment_count"],
                                    f["fragment_number"], f["total_length"], f["fragment_offset"], c.data or b"")
            elif c.name == "DISCONNECT":
                b = E.disconnect(f["data"], reliable_seq=c.reliable_seq, ack=c.ack_requested)
            else:
                continue
            assert E.build_command_bytes(b) == E.build_command_bytes(c), c.name
            rebuilt[c.name] = True
    assert {"CONNECT", "ACKNOWLEDGE", "SEND_RELIABLE", "SEND_FRAGMENT"} <= set(rebuilt)


def test_fragments_split_like_enet(mp3: dict[str, Any]) -> None:
    """``fragments()`` splits a packet exactly as the engine's ENet did in the capture."""
    groups: dict[tuple[str, int, int], list[E.Command]] = defaultdict(list)
    for _, _, flow, data in mp3["datagrams"]:
        for c in E.parse_datagram(data).commands:
            if c.name == "SEND_FRAGMENT":
                groups[(flow, c.channel, c["start_seq"])].append(c)
    assert groups
    for (_, channel, start), frags in groups.items():
        frags.sort(key=lambda c: c["fragment_number"])
        whole = b"".join(c.data or b"" for c in frags)
        mtu = len(frags[0].data or b"") - fragment_length(0)  # data per fragment + header overhead
        ours = E.fragments(channel, whole, start, mtu=mtu)
        assert [E.build_command_bytes(c) for c in ours] == [E.build_command_bytes(c) for c in frags]


def test_sender_numbers_commands_like_the_engine(mp3: dict[str, Any]) -> None:
    """EnetSender, given the packets in the order the engine queued them, numbers them exactly as
    the engine's ENet did (reliable/unreliable seqs per channel, fragment start seqs, unsequenced
    groups, peer-level control seqs)."""
    flows: dict[str, dict[str, Any]] = defaultdict(lambda: {"seen": set(), "frags": defaultdict(list),
                                                             "packets": [], "control": []})
    for _, _, flow, data in mp3["datagrams"]:
        st_ = flows[flow]
        for c in E.parse_datagram(data).commands:
            key = (c.name, c.channel, c.reliable_seq, c.fields.get("unreliable_seq"), c.fields.get("unsequenced_group"))
            if c.name == "ACKNOWLEDGE" or key in st_["seen"]:
                continue  # ACKs are not numbered; the rest may be retransmitted
            st_["seen"].add(key)
            if c.channel == spec.CONTROL_CHANNEL:
                st_["control"].append(c.reliable_seq)
            elif c.name == "SEND_FRAGMENT":
                group = st_["frags"][(c.channel, c["start_seq"])]
                if not group:
                    st_["packets"].append(("fragments", c.channel, c["start_seq"], group))
                group.append(c)
            else:
                st_["packets"].append((c.name, c.channel, c.reliable_seq, [c]))
    checked = 0
    for st_ in flows.values():
        sender = E.EnetSender(channel_count=3)
        assert sorted(st_["control"]) == [sender.next_control_seq() for _ in st_["control"]]

        def queue_order(p: tuple) -> tuple:
            name, channel, seq, cmds = p
            if name == "SEND_UNSEQUENCED":
                return (1, 0, cmds[0]["unsequenced_group"], 0, 0)
            return (0, channel, seq, name == "SEND_UNRELIABLE", cmds[0].fields.get("unreliable_seq", 0))

        for name, channel, _, cmds in sorted(st_["packets"], key=queue_order):
            cmds.sort(key=lambda c: c.fields.get("fragment_number", 0))
            data = b"".join(c.data or b"" for c in cmds)
            ours = sender.send(channel, data, reliable=name in ("SEND_RELIABLE", "fragments"),
                               unsequenced=name == "SEND_UNSEQUENCED")
            assert [E.build_command_bytes(c) for c in ours] == [E.build_command_bytes(c) for c in cmds], name
            checked += 1
    assert checked == sum(1 for g in mp3["golden"])


# --- bad input -------------------------------------------------------------------------------------

def _assert_clean(dg: E.Datagram, n: int) -> None:
    if dg.decompressed is not None:  # offsets count in the decompressed datagram
        n = dg.header_size + len(dg.decompressed)
    if dg.error is not None:
        assert 0 <= dg.error.offset <= n and dg.error.reason


def test_truncated_and_mutated_capture_datagrams_give_clear_errors(mp3: dict[str, Any]) -> None:
    rnd = random.Random(6)
    for _, _, _, data in mp3["datagrams"]:
        full = E.parse_datagram(data)
        whole = full.commands
        ends = {c.offset + c.size for c in whole}  # a cut there leaves a shorter, valid datagram
        for cut in range(len(data)):
            dg = E.parse_datagram(data[:cut])
            _assert_clean(dg, cut)
            assert (dg.error is None) == (cut in ends), cut
            assert [c.offset for c in dg.commands] == [c.offset for c in whole[:len(dg.commands)]]
        for _ in range(20):
            b = bytearray(data)
            b[rnd.randrange(len(b))] ^= 1 << rnd.randrange(8)
            dg = E.parse_datagram(bytes(b))
            _assert_clean(dg, len(b))
            E.EnetReassembler().feed(dg, 1, 0.0)
            E.looks_like_enet(bytes(b))


@given(st.binary(max_size=200), st.sampled_from([None, *compression.COMPRESSIONS_BY_NAME]))
def test_any_bytes_parse_without_exceptions(data: bytes, mode: str | None) -> None:
    dg = E.parse_datagram(data, compression=mode)
    _assert_clean(dg, len(data))
    r = E.EnetReassembler()
    r.feed(dg, 1, 0.0)
    r.finish()
    assert isinstance(E.looks_like_enet(data), bool)


@pytest.mark.parametrize("mode", ["range_coder", "fastlz", "zlib"])
@given(garbage=st.binary(min_size=1, max_size=300))
def test_garbage_compressed_bodies_are_errors(mode: str, garbage: bytes) -> None:
    dg = E.parse_datagram(b"\xc0\x01\x00\x05" + garbage, compression=mode)  # COMPRESSED | SENT_TIME
    _assert_clean(dg, 4 + len(garbage))
    if dg.decompressed is not None:
        assert len(dg.decompressed) <= spec.MAX_MTU


def test_each_rule_of_the_spec_is_enforced() -> None:
    """Every Check of every command, broken on purpose, names the rule and the command's offset."""
    frag = dict(start_seq=1, fragment_count=2, fragment_number=0, total_length=10, fragment_offset=0)
    broken = {
        "channel": {"channel": 255},
        "data_length": {"data": b""},  # SEND_FRAGMENT: empty fragment
        "fragment_count": {"fragment_count": spec.MAX_FRAGMENT_COUNT + 1, "total_length": spec.MAX_FRAGMENT_COUNT + 1},
        "fragment_number": {"fragment_number": 2},
        "total_length": {"total_length": spec.MAX_PACKET_SIZE + 1},
        "fragment_offset": {"fragment_offset": 10},
    }
    seen = set()
    for d in spec.COMMANDS:
        for check in d.checks:
            if d.name in ("CONNECT", "VERIFY_CONNECT"):
                value = 0 if check.op == ">=" else spec.MAX_CHANNEL_COUNT + 1
                f = {n: 0 for n in d.field_names} | {"channel_count": value}
                cmd = E.Command(d.number, spec.CONTROL_CHANNEL, 1, f, None, 0x80)
                peer = spec.UNASSIGNED_PEER_ID if d.name == "CONNECT" else 0
            else:
                f = {n: 0 for n in d.field_names}
                if d.fragment_key:
                    f |= frag
                data = b"x"
                channel = 1
                change = dict(broken.get(check.left, {}))
                if check.right == ("total_length", "-", "fragment_offset"):
                    change = {"fragment_offset": 5, "data": b"123456"}
                if check.left == "total_length" and check.right == "fragment_count":
                    change = {"total_length": 1, "fragment_count": 2, "fragment_number": 0}
                if check.left == "data_length" and check.right == spec.MAX_PACKET_SIZE:
                    continue  # a u16 dataLength cannot exceed it: the rule is there for other hosts
                data = change.pop("data", data)
                channel = change.pop("channel", channel)
                f |= change
                f.pop("data_length", None)
                cmd = E.Command(d.number, channel, 1, f, data, 0x80)
                peer = 0
            before = [] if d.name == "CONNECT" else [E.ping(1)]  # only CONNECT from the unassigned id
            dg = E.parse_datagram(E.build_datagram(peer, [*before, cmd], 1))
            assert dg.error is not None, (d.name, check)
            assert dg.error.offset == 4 + 4 * len(before) and d.name in dg.error.reason, (d.name, check, dg.error)
            assert len(dg.commands) == len(before)  # the commands before it are kept
            seen.add((d.name, check.left, str(check.right)))
    assert len(seen) == sum(len(d.checks) for d in spec.COMMANDS) - 5  # 5 data_length <= MAX_PACKET_SIZE rules


def test_peer_rules() -> None:
    # only CONNECT from the unassigned peer id; no CONNECT from an assigned one
    dg = E.parse_datagram(E.build_datagram(spec.UNASSIGNED_PEER_ID, [E.ping(1)], 1))
    assert dg.error and dg.error.offset == 4 and "unassigned" in dg.error.reason
    dg = E.parse_datagram(E.build_datagram(0, [E.connect(0, 1, 2, 3)], 1))
    assert dg.error and "CONNECT" in dg.error.reason
    # an ACK request without the sent time: ENet ignores the rest of the datagram
    dg = E.parse_datagram(E.build_datagram(0, [E.ping(1), E.ping(2)]))
    assert dg.error and dg.error.offset == 2 and len(dg.commands) == 1
    # unknown command numbers stop the datagram
    dg = E.parse_datagram(struct.pack(">HBBH", 0, 13, 0, 0))
    assert dg.error and "unknown command number 13" in dg.error.reason


def test_a_claimed_huge_packet_allocates_nothing() -> None:
    tracemalloc.start()
    try:
        # totalLength beyond any limit: rejected by the spec's rule before anything is kept
        huge = E.send_fragment(1, 1, 1, 1, 0, 0xFFFFFFFF, 0, b"abc")
        dg = E.parse_datagram(E.build_datagram(0, [huge], 1))
        assert dg.error and "totalLength" in dg.error.reason
        # the largest legal claim (32 MiB): fragments are kept as received, never preallocated
        r = E.EnetReassembler()
        for i in range(50):
            big = E.send_fragment(1, i + 1, i + 1, 2, 0, spec.MAX_PACKET_SIZE, 0, b"x" * 100)
            r.feed(E.parse_datagram(E.build_datagram(0, [big], 1)), i, 0.0)
        one = E.send_fragment(1, 99, 99, 1, 0, spec.MAX_PACKET_SIZE, 0, b"x" * 100)
        [p] = r.feed(E.parse_datagram(E.build_datagram(0, [one], 1)), 99, 0.0)
        assert p.error and "cover 100 of" in p.error
        assert len(r.finish()) == 50
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2_000_000


def test_reassembler_memory_is_bounded() -> None:
    r = E.EnetReassembler(max_groups=16, max_bytes=10_000)
    errors = []
    for i in range(200):
        frag = E.send_fragment(1, i, i, 3, 0, 3000, 0, b"y" * 1000)
        errors += r.feed(E.parse_datagram(E.build_datagram(0, [frag], 1)), i, 0.0)
    assert len(r._groups) <= 16 and r._pending <= 10_000
    assert errors and all(p.error and "bound memory" in p.error for p in errors)
    assert len(errors) + len(r.finish()) == 200


def test_fastlz_long_match_length_run_stops_at_the_output_limit(mp3: dict[str, Any]) -> None:
    # a real datagram's header, compressed flag set, with a FastLZ level-2 body whose match length
    # is a long run of 255 bytes: the decoder gives up as soon as the length passes the limit
    # (it used to read the whole run first: ~1 s per 100 kB of input)
    data = mp3["datagrams"][0][3]
    n = E.parse_datagram(data).header_size
    word = struct.unpack_from(spec.BYTE_ORDER + "H", data)[0] | spec.FLAG_COMPRESSED.put(1)
    header = struct.pack(spec.BYTE_ORDER + "H", word) + data[2:n]
    body = bytes([0x20]) + b"a" + bytes([0xE0]) + b"\xff" * 60_000 + b"\x00\x00"
    dg = E.parse_datagram(header + body, compression="fastlz")
    assert dg.error is not None and "exceeds" in dg.error.reason
    assert dg.error.offset < n + 40  # where the length passed the limit, not the end of the run
    with pytest.raises(compression.CompressionError, match="exceeds 4000 bytes") as e:
        compression.decompress(body, "fastlz", 4000)
    assert e.value.offset < 40
