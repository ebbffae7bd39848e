"""The ENet and multiplayer scapy layers against real captures, the engines' prints (goldens),
the core reader (read_pcap) and the Python parsers/builders of godot_dissect.enet/.multiplayer.

Every test runs with ``conf.debug_dissector = True``: a dissection error raises.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scapy.all import IP, UDP, Ether, Raw, RawPcapReader, conf, fuzz, rdpcap, sniff

from godot_dissect import decode, encode, jsonform
from godot_dissect import values as V
from godot_dissect.enet import build as enet_build
from godot_dissect.enet import build_datagram, parse_datagram
from godot_dissect.enet.checks import first_failure
from godot_dissect.multiplayer import godot3 as mp3
from godot_dissect.multiplayer import godot4 as mp4
from godot_dissect.pcap.reader import read_pcap
from godot_dissect.scapy import (
    COMMAND_LAYERS,
    ENET_LAYERS,
    MULTIPLAYER_LAYERS,
    SETTINGS,
    ENet,
    ENetAcknowledge,
    ENetBody,
    ENetCompressedBody,
    ENetConnect,
    ENetFragment,
    ENetPing,
    ENetSendFragment,
    ENetSendReliable,
    ENetSendUnsequenced,
    GodotCompressedBool,
    GodotCompressedInt,
    GodotENetPeerHeader3,
    GodotENetSysMsg3,
    GodotMP3,
    GodotMP3RemoteCall,
    GodotMP3RemoteSet,
    GodotMP4,
    GodotMP4ConfirmPath,
    GodotMP4RemoteCall,
    GodotMP4Spawn,
    GodotMP4Sync,
    GodotMP4SyncDelta,
    GodotMP4SysRelay,
    GodotVariant,
    GodotWSMultiplayer3,
    bind_godot_ports,
    enet_reassemble,
    multiplayer_messages,
    reset_flows,
    unbind_godot_ports,
)
from godot_dissect.scapy.mpmessages import MultiplayerMessage, read_layer
from godot_dissect.scapy.mpsettings import PORT_COMPRESSION
from godot_dissect.scapy.sessions import GodotTCPSession
from godot_dissect.spec import enet as enet_spec

from . import strategies as gst
from .message_diff import diff_messages

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ROOT / "captures"
MANIFEST = json.loads((CAPTURES / "manifest.json").read_text())
NAMES = sorted(n for n in MANIFEST if "multiplayer" in n or "enet" in n)
#: the compressed capture: one server/client pair per codec (manifest "pairs")
COMPRESSED = "godot3-enet-compressed"


@pytest.fixture(autouse=True)
def debug_dissector() -> Iterator[None]:
    old = conf.debug_dissector
    conf.debug_dissector = True
    reset_flows()
    try:
        yield
    finally:
        conf.debug_dissector = old
        reset_flows()


def _codecs(name: str) -> dict[int, str]:
    """Server port -> codec of a capture made with ENet compression (from its manifest)."""
    pairs = MANIFEST[name].get("pairs") or {}
    return {p["ports"]["server"]: codec for codec, p in pairs.items()}


@pytest.fixture
def codecs() -> Iterator[Any]:
    """Bind each compressed pair's server port to its codec while the test runs."""
    bound: list[int] = []

    def bind(name: str) -> dict[int, str]:
        ports = _codecs(name)
        for port, codec in ports.items():
            bind_godot_ports(enet=[port], compression=codec)
            bound.append(port)
        return ports

    yield bind
    unbind_godot_ports(enet=bound)


def _path(name: str) -> str:
    return str(CAPTURES / MANIFEST[name]["pcap"])


def _packets(name: str) -> list[Any]:
    """Whole messages: WebSocket captures through TCP reassembly (retransmissions dropped)."""
    reset_flows()
    return list(sniff(offline=_path(name), session=GodotTCPSession, quiet=True))


def _dump(v: Any) -> str:
    return jsonform.dumps(v)


# -- the same messages as the core reader -------------------------------------------------------------
def _flow(src: tuple[str, int], dst: tuple[str, int]) -> tuple:
    return (src[0], src[1], dst[0], dst[1])


def _norm(kind: str, command: str, node: Any, node_id: Any, method: Any, method_id: Any, value: Any,
          peer: Any) -> tuple:
    if kind == "peer":
        return kind, peer
    if kind in ("rpc", "rset"):
        return kind, command, node, method, method_id, _dump(value)
    if kind == "simplify_path":
        return kind, command, node, node_id
    if kind == "confirm_path":
        return kind, command, node if node_id is None else node_id
    if kind in ("raw", "spawn", "sync"):
        return kind, command, _dump(value)
    if kind == "sys":
        return kind, command, peer, _dump(value)
    return kind, command


def core_messages(path: str, **kw: Any) -> dict[tuple, list[tuple]]:
    out: dict[tuple, list[tuple]] = defaultdict(list)
    for r in read_pcap(path, **kw):
        if r.kind == "enet":
            continue
        f = r.fields or {}
        node_id = f.get("node_id")
        if r.kind == "confirm_path" and "cache_id" not in f:
            node_id = None  # the 4.0-4.2 form and Godot 3 name the path itself
        out[(r.src, r.sport, r.dst, r.dport)].append(
            _norm(r.kind, r.command or "", r.node, node_id, r.method, r.method_id, r.value, r.peer))
    return out


def _shown(m: MultiplayerMessage) -> MultiplayerMessage:
    return m.inner if m.inner is not None else m  # a relay shows the relayed packet, as records do


def scapy_messages(msgs: list[MultiplayerMessage]) -> dict[tuple, list[tuple]]:
    out: dict[tuple, list[tuple]] = defaultdict(list)
    for m in msgs:
        s = _shown(m)
        value = s.args if s.kind == "rpc" else s.value
        node_id = s.node_id if s.kind != "confirm_path" or s.node is None else None
        out[_flow(m.src, m.dst)].append(
            _norm(s.kind, s.command, s.node, node_id, s.method, s.method_id, value, m.peer if s is m else s.peer))
    return out


def _diff(core: dict, ours: dict) -> list[str]:
    return diff_messages(core, ours, width=200)


@pytest.mark.parametrize("name", NAMES)
def test_capture_gives_the_core_readers_messages(name: str, codecs: Any) -> None:
    if name == COMPRESSED:
        ports = codecs(name)
        msgs = multiplayer_messages(_packets(name))
        for port, codec in ports.items():
            core = {k: v for k, v in core_messages(_path(name), enet_compression=codec).items() if port in (k[1], k[3])}
            ours = {k: v for k, v in scapy_messages(msgs).items() if port in (k[1], k[3])}
            assert sum(map(len, core.values())) > 0
            assert not _diff(core, ours), f"{codec}:\n" + "\n".join(_diff(core, ours))
        return
    core = core_messages(_path(name))
    assert sum(map(len, core.values())) > 0
    ours = scapy_messages(multiplayer_messages(_packets(name)))
    assert not _diff(core, ours), "\n".join(_diff(core, ours))


# -- every datagram rebuilt from its layers is the captured one ---------------------------------------
@pytest.mark.parametrize(("name", "with_codecs"), [(n, False) for n in NAMES] + [(COMPRESSED, True)],
                         ids=[*NAMES, COMPRESSED + "-codecs-bound"])
def test_every_packet_dissects_and_builds_back(name: str, with_codecs: bool, codecs: Any) -> None:
    if with_codecs:
        codecs(name)
    path = _path(name)
    raws = [d for d, _ in RawPcapReader(path)]
    pkts = rdpcap(path)
    assert len(raws) == len(pkts)
    for data, p in zip(raws, pkts, strict=True):
        p.summary()
        p.show(dump=True)
        assert bytes(p) == data, p.summary()
        for layer in _godot_layers(p):  # each Godot layer alone builds its own bytes again
            assert bytes(type(layer)(bytes(layer))) == bytes(layer)
    if "enet" in name:  # found by the heuristic; a compressed CONNECT needs its codec
        missed = [bytes(p[UDP].payload) for p in pkts if ENet not in p]
        assert all(enet_spec.FLAG_COMPRESSED.get(int.from_bytes(d[:2], "big")) for d in missed)
        assert not missed or not with_codecs


def _godot_layers(p: Any) -> Iterator[Any]:
    for c in _all_commands(p):
        layer = c.payload
        if isinstance(layer, (GodotMP3, GodotMP4, GodotENetPeerHeader3, GodotENetSysMsg3)):
            yield layer


def _all_commands(p: Any) -> list[Any]:
    enet = p.getlayer(ENet)
    if enet is None:
        return []
    body = enet.getlayer(ENetBody)
    return list(enet.commands or []) + (list(body.commands) if body is not None else [])


def test_compressed_datagrams_decompress_with_their_codec(codecs: Any) -> None:
    """Godot 3.2.3 compressed every datagram it could with range coder, FastLZ, zlib and zstd:
    the scapy layers read the commands through the spec's codecs, the bytes stay the compressed ones."""
    ports = codecs(COMPRESSED)
    pkts = rdpcap(_path(COMPRESSED))
    seen: dict[str, int] = defaultdict(int)
    for p in pkts:
        body = p.getlayer(ENetCompressedBody)
        if body is None:
            continue
        codec = ports.get(p[UDP].sport) or ports.get(p[UDP].dport)
        assert body.codec == codec, body.codec
        assert p.getlayer(ENetBody).commands, p.summary()
        seen[codec] += 1
    assert set(seen) == set(ports.values()) and min(seen.values()) >= 5
    # without a codec the body is shown as compressed (a compressed CONNECT is not known as ENet)
    PORT_COMPRESSION.clear()
    reset_flows()
    flagged = [p for p in rdpcap(_path(COMPRESSED))
               if enet_spec.FLAG_COMPRESSED.get(int.from_bytes(bytes(p[UDP].payload)[:2], "big"))]
    assert len(flagged) == sum(seen.values())
    opaque = [p for p in flagged if ENet in p]
    assert len(opaque) >= len(flagged) - 2 * len(ports)
    assert all(ENetCompressedBody in p and ENetBody not in p for p in opaque)


# -- the engines' prints ------------------------------------------------------------------------------
def _godot_packet(m: MultiplayerMessage) -> bytes:
    """The Godot packet of a message as the goldens give it (without a transport header)."""
    layer = m.layer
    if isinstance(layer, (GodotWSMultiplayer3, GodotENetPeerHeader3)):
        return bytes(layer.payload)
    return bytes(layer)


def _golden(name: str) -> list[dict[str, Any]]:
    golden = MANIFEST[name]["golden"]
    return [json.loads(line) for line in (CAPTURES / golden).read_text().splitlines() if line.strip()]


def _by_flow(msgs: list[MultiplayerMessage]) -> dict[str, list[MultiplayerMessage]]:
    out: dict[str, list[MultiplayerMessage]] = defaultdict(list)
    for m in msgs:
        proto = "websocket" if m.transport == "websocket" else "udp"
        out[f"{proto} {m.src[0]}:{m.src[1]} -> {m.dst[0]}:{m.dst[1]}"].append(m)
    return out


@pytest.mark.parametrize("name", NAMES)
def test_packets_are_what_the_engines_printed(name: str, codecs: Any) -> None:
    """Per flow, in order, every packet the golden has (printed by the receiving engine, or made
    by it) is the bytes of the scapy layer at that place; node paths (resolved through the path
    cache), method names/ids and each argument agree with the engine's prints."""
    if _codecs(name):
        codecs(name)
    flows = _by_flow(multiplayer_messages(_packets(name)))
    checked = args_checked = 0
    for g in _golden(name):
        msgs = flows[g["flow"]]
        assert g["index"] < len(msgs), g
        m = msgs[g["index"]]
        if "hex" in g:
            assert _godot_packet(m).hex() == g["hex"], (g["command"], g["index"])
            checked += 1
        s = _shown(m)
        if "node_path" in g and s.kind in ("rpc", "rset", "simplify_path"):
            assert s.node == g["node_path"], g
        if "method" in g and s.kind == "rset":
            assert s.method == g["method"]
        if "method_id" in g:
            assert s.method_id == g["method_id"]
        elif "method" in g and s.kind == "rpc":
            assert s.method == g["method"]
        if g.get("argc") == 0 and g.get("byte_only"):  # no argument on the wire (the method's default)
            assert s.args == []
        elif g.get("args") is not None and s.kind == "rpc":
            _check_args(s, g["args"], 4 if isinstance(s.layer, GodotMP4) else 3)
            args_checked += 1
    assert checked > 0
    assert args_checked > 0 or "compressed" in name


def _check_args(m: MultiplayerMessage, golden_args: list[dict[str, Any]], major: int) -> None:
    dialect = f"godot{major}"
    fld = m.layer.get_field("args")
    layers = m.layer.args if not fld.isconditional or fld._evalcond(m.layer) else None
    assert len(m.args or []) == len(golden_args)
    for i, (value, g) in enumerate(zip(m.args or [], golden_args, strict=True)):
        if "var_to_bytes" not in g:  # a big argument: its var_to_bytes' sha256
            assert hashlib.sha256(encode(value, dialect)).hexdigest() == g["hex_sha256"]
            if layers is not None:
                assert hashlib.sha256(bytes(layers[i])).hexdigest() == g["hex_sha256"]
            continue
        wire = bytes.fromhex(g["var_to_bytes"])
        assert _dump(value) == _dump(decode(wire, dialect)), (i, g)
        if layers is not None and not isinstance(layers[i], (GodotCompressedBool, GodotCompressedInt)):
            if isinstance(value, V.NodePath):  # the engine leaves NodePath padding uninitialised
                assert encode(layers[i].to_value(), dialect) == encode(decode(wire, dialect), dialect)
                continue
            assert bytes(layers[i]) == wire, (i, g)  # the argument layer is the engine's var_to_bytes


def test_reassembled_fragments_are_the_engines_payloads() -> None:
    """The 5000-byte PoolByteArray calls went as reliable SEND_FRAGMENTs: joined, they are the
    golden's packets, and the fragments themselves show as fragments."""
    name = "godot3-enet-multiplayer"
    pkts = rdpcap(_path(name))
    frags = [c for p in pkts for c in _all_commands(p) if isinstance(c, ENetSendFragment)]
    assert frags and all(isinstance(c.payload, ENetFragment) for c in frags)
    joined = [r for r in enet_reassemble(pkts) if r.fragments > 1]
    golden = {g["hex_sha256"]: g for g in _golden(name) if "hex_sha256" in g}
    assert len(joined) == len(golden) == 2
    for r in joined:
        packet = bytes(r.layer.payload)  # after the Godot 3 peer header
        assert hashlib.sha256(packet).hexdigest() in golden
        assert isinstance(r.layer.payload, GodotMP3RemoteCall)
        arg = r.layer.payload.args[0]
        assert isinstance(arg.to_value(), bytes) and len(arg.to_value()) == 5000


# -- major detection ----------------------------------------------------------------------------------
def test_godot_major_from_the_connect_fingerprint() -> None:
    g3 = rdpcap(_path("godot3-enet-multiplayer"))
    assert g3[0][ENetConnect].channel_count == 3
    assert any(GodotMP3 in p for p in g3) and not any(GodotMP4 in p for p in g3)
    reset_flows()
    g4 = rdpcap(_path("godot4-enet-multiplayer-assembled"))
    assert g4[0][ENetConnect].channel_count == 255
    assert any(GodotMP4 in p for p in g4) and not any(GodotMP3 in p for p in g4)


def test_major_fixed_by_port_setting_or_argument() -> None:
    rpc4 = mp4.build_rpc(1, [True, 7], node_id=1)
    dg = build_datagram(0, [enet_build.send_reliable(1, 1, rpc4)], sent_time=5)
    udp = bytes(Ether() / IP() / UDP(sport=50000, dport=7777) / Raw(dg))
    bind_godot_ports(enet=[7777], major=4)
    try:
        assert isinstance(Ether(udp)[ENetSendReliable].payload, GodotMP4RemoteCall)
    finally:
        unbind_godot_ports(enet=[7777])
    assert isinstance(ENet(dg, major=4)[ENetSendReliable].payload, GodotMP4RemoteCall)
    SETTINGS["major"] = 3
    try:
        reset_flows()
        assert isinstance(ENet(dg)[ENetSendReliable].payload, GodotENetPeerHeader3)  # channel 1: data
        assert isinstance(ENet(dg.replace(b"\x86\x01", b"\x86\x00", 1))[ENetSendReliable].payload,
                          GodotENetSysMsg3)  # channel 0: Godot 3's config channel
    finally:
        SETTINGS["major"] = None
    reset_flows()
    assert isinstance(ENet(dg)[ENetSendReliable].payload, GodotMP4RemoteCall)  # guessed from the packet


def test_version_settings_pick_the_forms() -> None:
    """Godot 3.0/3.1's 12-byte peer header and Godot 4.0-4.2's CONFIRM_PATH by settings."""
    old = GodotMP3RemoteCall(target=1, method="ping", args=[])
    data = bytes.fromhex("01000000 00000000 00000000") + bytes(old)
    SETTINGS["enet3_header"] = "3.0-3.1"
    try:
        p = ENet(build_datagram(0, [enet_build.send_reliable(1, 1, data)], sent_time=1), major=3)
        head = p[ENetSendReliable].payload
        assert type(head).__name__ == "GodotENetPeerHeader3Until31" and head.flags == 0
        assert bytes(head.payload) == bytes(old) and bytes(p[ENet]) == bytes(p)
    finally:
        SETTINGS["enet3_header"] = "3.2+"
    legacy = mp4.build_confirm_path(True, node_path="Main")
    assert type(GodotMP4(legacy)).__name__ == "GodotMP4ConfirmPathUntil42"  # by size
    six = bytes([2, 1]) + b"Mai\0"  # a 4.0-4.2 path of 3 characters is 6 bytes, like the 4.3+ form
    assert isinstance(GodotMP4(six), GodotMP4ConfirmPath)
    SETTINGS["confirm_form"] = "path"
    try:
        assert type(GodotMP4(six)).__name__ == "GodotMP4ConfirmPathUntil42"
        assert GodotMP4(six).node_path == "Mai"
    finally:
        SETTINGS["confirm_form"] = None


def test_websocket_port_bound_with_a_major() -> None:
    name = "godot4-websocket-multiplayer"
    port = 4261
    bind_godot_ports(websocket=[port], major=4)
    try:
        msgs = multiplayer_messages(_packets(name))
    finally:
        unbind_godot_ports(websocket=[port])
    gold = _golden(name)
    assert [m.command for m in msgs][:1] == [gold[0]["command"]] == ["PEER_ID"]
    assert len(msgs) == len(gold)
    assert sum(m.kind == "rpc" for m in msgs) == sum(g["command"] == "REMOTE_CALL" for g in gold) > 0


def test_craft_a_compressed_datagram() -> None:
    """A zlib-compressed body made from commands reads back in the ENet parser with that codec."""
    rpc = mp4.build_rpc(0, ["compress me " * 20], node_id=1)
    pkt = ENet(peer_id=0, sent_time_=9) / ENetCompressedBody(codec="zlib") / ENetBody(
        commands=[ENetSendReliable(channel=0, reliable_seq=2) / Raw(rpc)])
    wire = bytes(pkt)
    assert enet_spec.FLAG_COMPRESSED.get(int.from_bytes(wire[:2], "big")) and len(wire) < len(rpc)
    dg = parse_datagram(wire, compression="zlib")
    assert dg.error is None and dg.commands[0].data == rpc
    back = ENet(wire, major=4)
    assert bytes(back) == wire and ENetBody not in back  # no codec set: shown compressed
    SETTINGS["compression"] = "zlib"
    try:
        back = ENet(wire, major=4)
        assert bytes(back) == wire and back[GodotMP4RemoteCall].args[0].to_value() == "compress me " * 20
    finally:
        SETTINGS["compression"] = None


def test_enet_heuristic_on_other_ports() -> None:
    """A Godot 3.2.3 capture on ports nobody bound is found as ENet, and plain Variant UDP is not."""
    pkts = rdpcap(_path("godot3-enet-multiplayer"))
    assert all(ENet in p for p in pkts)
    reset_flows()
    plain = rdpcap(_path("godot3-udp-all-types"))
    assert not any(ENet in p for p in plain) and all(GodotVariant in p for p in plain)


# -- crafting -----------------------------------------------------------------------------------------
def test_craft_datagram_chained_and_listed() -> None:
    rpc = GodotMP4RemoteCall(node_id=1, method_id=3, args=[V.Vector3(1, 2, 3), 7, True])
    want = build_datagram(0, [enet_build.acknowledge(0, 4, 77),
                              enet_build.send_reliable(0, 5, mp4.build_rpc(3, [V.Vector3(1, 2, 3), 7, True],
                                                                           node_id=1))], sent_time=100)
    listed = ENet(peer_id=0, sent_time_=100, commands=[
        ENetAcknowledge(channel=0, reliable_seq=4, received_reliable_seq=4, received_sent_time=77),
        ENetSendReliable(channel=0, reliable_seq=5) / rpc])
    chained = ENet(peer_id=0, sent_time_=100) / ENetAcknowledge(
        channel=0, reliable_seq=4, received_reliable_seq=4, received_sent_time=77) / ENetSendReliable(
        channel=0, reliable_seq=5) / rpc
    assert bytes(listed) == want == bytes(chained)
    back = ENet(want, major=4)
    assert bytes(back) == want and back[GodotMP4RemoteCall].method_id == 3
    # data_length, the sent-time flag are computed; a value set by hand stays (malformed on purpose)
    assert ENet(bytes(ENet() / ENetPing())).has_sent_time == 1
    bad = bytes(ENet(sent_time_=1) / ENetSendReliable(data_length=99) / Raw(b"abc"))
    dg = parse_datagram(bad)
    assert dg.error is not None and "claims 99 data bytes" in dg.error.reason


def test_craft_godot3_packets_like_the_engine() -> None:
    assert bytes(GodotMP3RemoteCall(node_path="Main", method="chat", args=["hi", V.Color(1, 0, 0, 1)])) == \
        mp3.build_rpc("chat", ["hi", V.Color(1, 0, 0, 1)], node_path="Main")
    assert bytes(GodotMP3RemoteSet(target=2, property="hp", value=75)) == mp3.build_rset("hp", 75, path_id=2)
    wrapped = GodotENetPeerHeader3(src=1, dst=0) / GodotMP3RemoteCall(target=1, method="ping", args=[])
    assert bytes(wrapped) == bytes.fromhex("01000000 00000000") + mp3.build_rpc("ping", [], path_id=1)
    # editing a dissected call recomputes argc and the appended path's offset
    p = GodotMP3(mp3.build_rpc("chat", ["hi"], node_path="Main"))
    p.args = ["a much longer message", 5]
    assert bytes(p) == mp3.build_rpc("chat", ["a much longer message", 5], node_path="Main")


def test_craft_godot4_packets_like_the_engine() -> None:
    assert bytes(GodotMP4RemoteCall(node_path="Main", method_id=1, args=["x"])) == \
        mp4.build_rpc(1, ["x"], node_path="Main")
    assert bytes(GodotMP4RemoteCall(node_id=300, method_id=0x8001)) == mp4.build_rpc(0x8001, [], node_id=300)
    assert bytes(GodotMP4RemoteCall(node_id=70000, method_id=2, args_bytes=b"\x01\x02")) == \
        mp4.build_rpc(2, [b"\x01\x02"], node_id=70000)
    assert bytes(GodotMP4Spawn(scene_id=255, spawner_id=1, net_id=5, name_="Bob", sync_ids=[7, 8], arg=42,
                               state=[1, "x"])) == mp4.build_spawn(255, 1, 5, "Bob", [7, 8], [1, "x"], arg=42)
    assert bytes(GodotMP4Sync(time_=9, entries=[{"net_id": 3, "state": [1, 2.5]}])) == \
        mp4.build_sync(9, [(3, [1, 2.5])])
    assert bytes(GodotMP4SyncDelta(entries=[{"net_id": 3, "indexes": 5, "state": [True]}])) == \
        mp4.build_sync_delta([(3, 5, [True])])
    relay = GodotMP4SysRelay(peer=-3) / GodotMP4RemoteCall(node_id=1, method_id=0, args=[True])
    assert bytes(relay) == mp4.build_sys("RELAY", -3, mp4.build_rpc(0, [True], node_id=1))
    assert bytes(GodotMP4ConfirmPath(valid=1, cache_id=4)) == mp4.build_confirm_path(True, 4)
    # the width flags follow the values when a dissected packet is edited
    p = GodotMP4(mp4.build_rpc(1, [5], node_id=1))
    assert p.node_comp == 0
    p.node_id = 70000
    assert bytes(p) == mp4.build_rpc(1, [5], node_id=70000)


# -- hypothesis: crafted packets read back by the Python parsers ---------------------------------------
_U = {"B": 0xFF, "H": 0xFFFF, "I": 0xFFFFFFFF}


@st.composite
def enet_commands(draw: Any) -> tuple[list[Any], list[Any]]:
    """Random ENet commands: (scapy layers, godot_dissect.enet Commands)."""
    layers, cmds = [], []
    for _ in range(draw(st.integers(1, 4))):
        d = draw(st.sampled_from([c for c in enet_spec.COMMANDS if c.needs_peer]))  # never none at all
        values = {f.name: draw(st.integers(0, _U[f.letter])) for f in d.fields if f.name != d.data_length}
        channel = draw(st.integers(0, 254)) if d.delivery else enet_spec.CONTROL_CHANNEL
        seq = draw(st.integers(0, 0xFFFF))
        data = draw(st.binary(max_size=40)) if d.data_length else None
        flags = d.sent_flags[0]
        if d.fragment_key is not None:  # keep what ENet's receiver checks consistent
            count = draw(st.integers(1, 4))
            values.update(fragment_count=count, fragment_number=draw(st.integers(0, count - 1)),
                          total_length=len(data or b"") + 100, fragment_offset=0)
            data = data or b"x"
        if d.name == "ACKNOWLEDGE":
            values["received_reliable_seq"] = seq
        layer = COMMAND_LAYERS[d.number](channel=channel, reliable_seq=seq,
                                         **{k: v for k, v in values.items()})
        if data is not None:
            layer = layer / Raw(data)
        layers.append(layer)
        cmds.append(enet_build.command(d.name, channel, seq, data, ack=bool(flags & enet_spec.FLAG_ACKNOWLEDGE.mask),
                                       unsequenced=bool(flags & enet_spec.FLAG_UNSEQUENCED.mask), **values))
    return layers, cmds


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(enet_commands(), st.integers(0, enet_spec.MAX_PEER_ID - 1), st.integers(0, 0xFFFF))
def test_crafted_enet_reads_back_in_the_enet_parser(cmds: Any, peer: int, sent: int) -> None:
    layers, model = cmds
    p = ENet(peer_id=peer, sent_time_=sent, commands=layers)
    wire = bytes(p)
    assert wire == build_datagram(peer, model, sent_time=sent)
    dg = parse_datagram(wire)
    # every command up to the first one breaking a rule of the spec (random fields may) reads back
    valid = next((i for i, c in enumerate(model) if first_failure(
        enet_spec.COMMANDS_BY_NAME[c.name].checks, {**c.fields, "channel": c.channel,
                                                     "reliable_seq": c.reliable_seq}) is not None), len(model))
    assert len(dg.commands) == valid and (dg.error is None) == (valid == len(model)), (valid, dg.error)
    assert [(c.name, c.channel, c.reliable_seq, c.fields, c.data) for c in dg.commands] == \
        [(c.name, c.channel, c.reliable_seq, c.fields, c.data) for c in model][:valid]
    back = ENet(wire, major=4)
    assert bytes(back) == wire


_args4 = st.lists(st.one_of(st.booleans(), st.integers(-(1 << 63), (1 << 63) - 1), gst.text,
                            st.builds(V.Vector2, gst.f32, gst.f32)), max_size=5)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.integers(0, 0x7FFFFFFF).map(lambda n: ("id", n)), gst.text.filter(lambda t: "\0" not in t)
                 .map(lambda t: ("path", t))), st.integers(0, 0xFFFF), _args4)
def test_crafted_godot4_rpc_reads_back_in_the_decoder(node: Any, method_id: int, args: list[Any]) -> None:
    kw = {"node_id": node[1]} if node[0] == "id" else {"node_path": node[1]}
    p = GodotMP4RemoteCall(method_id=method_id, args=args, **kw)
    wire = bytes(p)
    assert wire == mp4.build_rpc(method_id, args, **kw)
    m = mp4.decode_packet(wire)
    assert m.error is None and m.method_id == method_id
    assert _dump(m.args) == _dump(args)
    assert (m.node_id if node[0] == "id" else m.node) == node[1]
    back = GodotMP4(wire)
    assert bytes(back) == wire and _dump(read_layer(back)["args"]) == _dump(args)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 0x7FFFFFFF), gst.text.filter(lambda t: t and "\0" not in t), st.lists(gst.leaves("godot3"),
                                                                                           max_size=4))
def test_crafted_godot3_rpc_reads_back_in_the_decoder(path_id: int, method: str, args: list[Any]) -> None:
    p = GodotMP3RemoteCall(target=path_id, method=method, args=args)
    wire = bytes(p)
    assert wire == mp3.build_rpc(method, args, path_id=path_id)
    m = mp3.decode_packet(wire)
    assert m.error is None and (m.node_id, m.method) == (path_id, method)
    assert _dump(m.args) == _dump(args)
    assert bytes(GodotMP3(wire)) == wire


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 254), st.integers(0, 0xFFFFFFFF), st.integers(0, 0xFFFFFFFF),
       gst.text.filter(lambda t: t and not set(t) & set('.:/"%@')), st.lists(st.integers(0, 0xFFFFFFFF), max_size=3),
       _args4)
def test_crafted_spawn_reads_back_in_the_decoder(scene: int, spawner: int, net: int, name: str, syncs: list[int],
                                                 state: list[Any]) -> None:
    wire = bytes(GodotMP4Spawn(scene_id=scene, spawner_id=spawner, net_id=net, name_=name, sync_ids=syncs,
                               state=state))
    assert wire == mp4.build_spawn(scene, spawner, net, name, syncs, state)
    m = mp4.decode_packet(wire)
    assert m.error is None and m.fields["name"] == name and m.fields["sync_ids"] == syncs
    assert _dump(m.value) == _dump(state)


_entries = st.lists(st.tuples(st.integers(0, 0xFFFFFFFF), st.integers(0, (1 << 64) - 1), _args4.filter(bool)),
                   min_size=1, max_size=3)  # the engine takes no SYNC without an entry


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 0xFFFF), _entries, st.integers(-(1 << 31), (1 << 31) - 1))
def test_crafted_sync_and_sys_read_back_in_the_decoder(time: int, entries: list[Any], peer: int) -> None:
    full = bytes(GodotMP4Sync(time_=time, entries=[{"net_id": n, "state": v} for n, _, v in entries]))
    assert full == mp4.build_sync(time, [(n, v) for n, _, v in entries])
    delta = bytes(GodotMP4SyncDelta(entries=[{"net_id": n, "indexes": i, "state": v} for n, i, v in entries]))
    assert delta == mp4.build_sync_delta(entries)
    for wire in (full, delta):
        m = mp4.decode_packet(wire)
        assert m.error is None and _dump(m.value) == _dump([v for _, _, v in entries])
        assert bytes(GodotMP4(wire)) == wire and _dump(read_layer(GodotMP4(wire))["value"]) == _dump(m.value)
    inner = mp4.build_rpc(1, [peer], node_id=2)
    relay = bytes(GodotMP4SysRelay(peer=peer) / GodotMP4(inner))
    assert relay == mp4.build_sys("RELAY", peer, inner)
    m = mp4.decode_packet(relay)
    assert m.peer == peer and m.inner is not None and m.inner.args == [peer]


# -- robustness ---------------------------------------------------------------------------------------
def _all_layer_classes() -> list[Any]:
    return [ENet, *ENET_LAYERS.values(), *MULTIPLAYER_LAYERS.values(), GodotCompressedBool, GodotCompressedInt]


@pytest.mark.parametrize("cls", _all_layer_classes(), ids=lambda c: c.__name__)
def test_fuzz_builds_and_dissects(cls: Any) -> None:
    random.seed(cls.__name__)
    reader = ENet if cls is ENet or cls in ENET_LAYERS.values() else None
    for _ in range(60):
        data = bytes(fuzz(cls()))
        p = (reader or cls)(data)
        p.summary()
        p.show(dump=True)
        assert bytes(p) == data
        if cls in ENET_LAYERS.values():
            q = ENet(b"\x80\x00\x00\x01" + data)  # as the command of a datagram
            assert bytes(q) == b"\x80\x00\x00\x01" + data
        if isinstance(p, (GodotMP3, GodotMP4)):
            (GodotMP3 if isinstance(p, GodotMP3) else GodotMP4)(data).summary()


@pytest.mark.parametrize("name", ["godot3-enet-multiplayer", "godot4-enet-multiplayer-assembled"])
def test_truncated_and_mutated_datagrams(name: str) -> None:
    """Every prefix and random byte flips of real datagrams: no exception, the same bytes back, and
    the ENet parser's verdict (error or not) is the layers' (truncated/unknown command layers)."""
    rnd = random.Random(7)
    datagrams = [bytes(p[UDP].payload) for p in rdpcap(_path(name))]
    for dg in datagrams[:60]:
        for cut in range(1, len(dg)) if len(dg) < 80 else rnd.sample(range(1, len(dg)), 40):
            p = ENet(dg[:cut], major=3 if "godot3" in name else 4)
            p.summary()
            p.show(dump=True)
            assert bytes(p) == dg[:cut]
        for _ in range(10):
            b = bytearray(dg)
            b[rnd.randrange(len(b))] ^= 1 << rnd.randrange(8)
            p = ENet(bytes(b))
            p.show(dump=True)
            assert bytes(p) == bytes(b)


def test_malformed_multiplayer_packets_dissect() -> None:
    """Truncated engine packets of every command and junk after them build back unchanged."""
    packets = [mp4.build_rpc(3, [V.Vector3(1, 2, 3), 300, "x"], node_path="Main/World"),
               mp4.build_spawn(255, 1, 5, "Bob", [7], [1, "x"], arg=42), mp4.build_sync(9, [(3, [1, 2.5])]),
               mp4.build_sync_delta([(3, 5, [True])]), mp4.build_simplify_path("0" * 32, 2, "Main"),
               mp4.build_sys("RELAY", 0, mp4.build_rpc(0, [], node_id=1)), mp4.build_confirm_path(True, 4)]
    g3 = [mp3.build_rpc("chat", ["hi", 5], node_path="Main"), mp3.build_rset("hp", 5, path_id=1),
          mp3.build_simplify_path(1, "Main")]
    for cls, pkts in ((GodotMP4, packets), (GodotMP3, g3)):
        for data in pkts:
            for cut in range(1, len(data) + 1):
                for extra in (b"", b"\0junk"):
                    p = cls(data[:cut] + extra)
                    p.show(dump=True)
                    p.summary()
                    p.haslayer(GodotVariant)  # walks every list of packets, those the data ended in too
                    assert cls in p
                    assert bytes(p) == data[:cut] + extra


def test_deep_and_huge_claims_do_not_allocate_or_recurse() -> None:
    huge = bytes([0x04]) + b"\x00" + (0xFFFFFFFF).to_bytes(4, "little") * 4  # spawn: counts past the end
    assert bytes(GodotMP4(huge)) == huge
    # one argument: an Array nested 100,000 levels (past the engine's limit)
    deep = bytes([0x00, 1, 0, 1]) + b"\x1c\x00\x00\x00\x01\x00\x00\x00" * 100_000 + b"\x00" * 4
    p = GodotMP4(deep)
    assert "<malformed>" in p.summary() and bytes(p) == deep
    assert mp4.decode_packet(deep).error is not None
    frag = ENet(build_datagram(0, [enet_build.send_fragment(0, 1, 1, 0xFFFFF, 0, 0x7FFFFFFF, 0, b"x")], sent_time=1))
    assert enet_reassemble([Ether() / IP() / UDP(sport=1, dport=2) / frag])[0].error  # never completed, no buffer


# -- the README --------------------------------------------------------------------------------------
def test_readme_multiplayer_example_runs(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    monkeypatch.chdir(ROOT)
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## scapy layers", 1)[1].split("\n## ", 1)[0]
    blocks = [b for b in re.findall(r"```python\n(.*?)```", section, re.S) if "ENet" in b or "import *" in b]
    assert len(blocks) >= 2
    ns: dict[str, Any] = {}
    for b in blocks:
        exec(compile(b, "README.md", "exec"), ns)  # noqa: S102 - our own documentation
    out = capsys.readouterr().out
    assert "GodotMP3 REMOTE_CALL Main.spawned(" in out and "rpc Main chat welcome a" in out
    assert "SEND_RELIABLE ch0 GodotMP4 REMOTE_CALL node#1.method#3(" in out


def test_send_bytes_reach_an_engine_decoder() -> None:
    """Crafted ENet + SceneMultiplayer bytes are what the parsers expect end to end."""
    pkt = IP(dst="127.0.0.1") / UDP(sport=51000, dport=7000) / ENet(peer_id=0, sent_time_=1) / ENetSendUnsequenced(
        channel=1, unsequenced_group=3) / GodotMP4RemoteCall(node_id=2, method_id=1, args=[V.Vector2(1, 2)])
    dg = parse_datagram(bytes(pkt[UDP].payload))
    assert dg.error is None and dg.commands[0].name == "SEND_UNSEQUENCED"
    m = mp4.decode_packet(dg.commands[0].data or b"")
    assert (m.node_id, m.method_id, m.args) == (2, 1, [V.Vector2(1, 2)])
    assert encode(V.Vector2(1, 2), "godot4") in bytes(pkt)
