"""The scapy layers (godot_dissect.scapy) against the core reader, the real engines and the fuzzer.

Every test runs with ``conf.debug_dissector = True``: a dissection error raises instead of
quietly becoming Raw.
"""

from __future__ import annotations

import contextlib
import json
import random
import re
import socket
import struct
import threading
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scapy.all import IP, TCP, UDP, Ether, Raw, RawPcapReader, TCPSession, conf, fuzz, rdpcap, sniff
from scapy.supersocket import SimpleSocket

from godot_dissect import DecodeError, decode_prefix, encode, jsonform
from godot_dissect import values as V
from godot_dissect.fuzz.malformed import malformed_corpus
from godot_dissect.pcap.reader import read_pcap
from godot_dissect.scapy import (
    MAX_DEPTH,
    GodotArray,
    GodotDebugger,
    GodotDictionary,
    GodotInt,
    GodotOpaque,
    GodotPDU,
    GodotString,
    GodotVariant,
    GodotVector2,
    GodotWebSocket,
    bind_godot_ports,
    enable_heuristics,
    godot_messages,
    reset_flows,
    unbind_godot_ports,
)
from godot_dissect.scapy.variant import VARIANT_CLASSES
from godot_dissect.spec import DIALECTS, get_dialect

from .message_diff import diff_messages
from .oracle_cases import ANY_ID, cases_for, value_for
from .resegment import all_in_one, resegment

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ROOT / "captures"
MANIFEST = json.loads((CAPTURES / "manifest.json").read_text())
NAMES = sorted(n for n in MANIFEST if "multiplayer" not in n and "enet" not in n)  # multiplayer: another issue


@pytest.fixture(autouse=True)
def debug_dissector() -> Iterator[None]:
    old = conf.debug_dissector
    conf.debug_dissector = True
    reset_flows()
    try:
        yield
    finally:
        conf.debug_dissector = old


def same(a: Any, b: Any) -> bool:
    return jsonform.dumps(a) == jsonform.dumps(b)


# -- every real capture gives the core reader's messages ------------------------------------------
def _flow(transport: str, src: str, sport: int, dst: str, dport: int) -> tuple:
    return ("udp" if transport == "udp" else "tcp", src, sport, dst, dport)


def core_messages(path: str) -> dict[tuple, list[tuple]]:
    out: dict[tuple, list[tuple]] = defaultdict(list)
    for r in read_pcap(path):
        assert r.kind != "error", r.error
        key = _flow(r.transport, r.src, r.sport, r.dst, r.dport)
        if r.kind == "debugger":
            out[key].append(("debugger", r.message, r.thread, jsonform.dumps(r.value)))
        elif r.kind == "text":
            out[key].append(("text", r.value))
        else:
            out[key].append(("variant", jsonform.dumps(r.value)))
    return out


def scapy_messages(pkts: Any) -> dict[tuple, list[tuple]]:
    out: dict[tuple, list[tuple]] = defaultdict(list)
    for pkt in pkts:
        l4 = pkt.getlayer(TCP) or pkt.getlayer(UDP)
        if l4 is None:
            continue
        key = _flow("udp" if isinstance(l4, UDP) else "tcp", pkt[IP].src, l4.sport, pkt[IP].dst, l4.dport)
        for m in godot_messages(pkt):
            assert m.kind != "error", m.value
            if m.kind == "debugger":
                out[key].append(("debugger", m.message, m.thread, jsonform.dumps(m.value)))
            elif m.kind == "text":
                out[key].append(("text", m.value))
            else:
                out[key].append(("variant", jsonform.dumps(m.value)))
    return out


def _diff(core: dict, ours: dict) -> list[str]:
    return diff_messages(core, ours, width=150)


@pytest.mark.parametrize("name", NAMES)
def test_capture_gives_the_core_readers_messages(name: str) -> None:
    path = str(CAPTURES / MANIFEST[name]["pcap"])
    core = core_messages(path)
    assert sum(map(len, core.values())) > 0
    ours = scapy_messages(sniff(offline=path, session=TCPSession, quiet=True))
    assert not _diff(core, ours), "\n".join(_diff(core, ours))


def test_udp_capture_with_rdpcap() -> None:
    path = str(CAPTURES / MANIFEST["godot3-udp-all-types"]["pcap"])
    pkts = rdpcap(path)
    assert all(GodotVariant in p for p in pkts)
    assert not _diff(core_messages(path), scapy_messages(pkts))


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_every_segment_dissects_and_builds_back(name: str) -> None:
    """Without TCPSession every segment is dissected on its own (PDUs cut anywhere, WebSocket
    frames mid-payload, the multiplayer capture's non-Variant bodies): no exception, every layer
    shows, and every packet builds back to its bytes."""
    path = str(CAPTURES / MANIFEST[name]["pcap"])
    raws = [d for d, _ in RawPcapReader(path)]
    pkts = rdpcap(path)
    assert len(raws) == len(pkts)
    for data, p in zip(raws, pkts, strict=True):
        p.summary()
        p.show(dump=True)
        assert bytes(p) == data, p.summary()


def _split_in_order(stream: bytes) -> list[tuple[int, bytes]]:
    rnd, out, i = random.Random(3), [], 0
    while i < len(stream):
        n = rnd.randint(1, 40)
        out.append((i, stream[i:i + n]))
        i += n
    return out


@pytest.mark.parametrize("plan", [all_in_one, _split_in_order], ids=["all_in_one", "split_1_to_40_bytes"])
@pytest.mark.parametrize("name", ["godot3-tcp-stream", "godot3-debugger"])
def test_resegmented_tcp_capture(name: str, plan: Any, tmp_path: Path) -> None:
    """Other segment boundaries (every PDU in one segment; 1-40 byte segments, so length prefixes
    and bodies are cut anywhere) give the same messages through TCPSession."""
    out = tmp_path / "reseg.pcap"
    resegment(str(CAPTURES / MANIFEST[name]["pcap"]), str(out), plan)
    core = core_messages(str(CAPTURES / MANIFEST[name]["pcap"]))
    ours = scapy_messages(sniff(offline=str(out), session=TCPSession, quiet=True))
    assert not _diff(core, ours), "\n".join(_diff(core, ours))


def test_length_prefix_and_body_in_separate_segments() -> None:
    """Real Godot 3.2.3 sends the u32 length of a put_var in a segment of its own."""
    path = str(CAPTURES / MANIFEST["godot3-tcp-stream"]["pcap"])
    prefix_only = [p for p in rdpcap(path) if TCP in p and len(p[TCP].payload) == 4]
    assert len(prefix_only) >= 50
    pdus = [p for p in sniff(offline=path, session=TCPSession, quiet=True) if GodotPDU in p]
    big = [p for p in pdus if p[GodotPDU].length >= 100000]
    expected = next(r.value for r in read_pcap(path) if isinstance(r.value, bytes) and len(r.value) == 100000)
    assert big and big[0][GodotPDU].to_value() == expected


# -- the engines' bytes ------------------------------------------------------------------------------
def _only_padding_differs(ours: bytes, theirs: bytes) -> bool:
    return len(ours) == len(theirs) and all(a == 0 for a, b in zip(ours, theirs, strict=True) if a != b)


def _materialize(p: Any) -> None:
    p.show(dump=True)


def _check_engine_case(run: Any, name: str) -> None:
    case = next(c for c in cases_for(run.family) if c.name == name)
    res = run.encoded[name]
    assert res.ok, res.error
    wire = res.data_full if case.full else res.data
    value = value_for(case, run.family)
    # dissecting the engine's bytes gives the value, lazily and from the fields
    p = GodotVariant(wire, dialect=run.dialect)
    assert bytes(p) == wire
    q = GodotVariant(wire, dialect=run.dialect)
    _materialize(q)
    assert q._lazy is None and (q.key is not None or isinstance(q, GodotOpaque))
    if value is ANY_ID:
        assert isinstance(p.to_value(), V.ObjectID) and p.to_value().id != 0
        assert q.to_value() == p.to_value()
    else:
        assert same(p.to_value(), value), (p.to_value(), value)
        assert same(q.to_value(), value), (q.to_value(), value)
    assert bytes(q) == wire  # the field tree builds the engine's bytes again (padding included)
    if value is ANY_ID:
        return
    # crafting from the value gives the engine's bytes (NodePath padding: the engine leaves it as is)
    c = GodotVariant.from_value(value, run.dialect, full_objects=case.full)
    ours = bytes(c)
    assert ours == encode(value, run.dialect, full_objects=case.full)
    _materialize(c)
    assert bytes(c) == ours  # built from the fields
    if isinstance(value, V.NodePath):
        assert _only_padding_differs(ours, wire), f"{ours.hex()} vs {wire.hex()}"
    else:
        assert ours.hex() == wire.hex()


@pytest.mark.parametrize("case_name", [c.name for c in cases_for(3)])
def test_godot3_engine_vector(godot3_run: Any, case_name: str) -> None:
    _check_engine_case(godot3_run, case_name)


@pytest.mark.parametrize("case_name", [c.name for c in cases_for(4)])
def test_godot4_engine_vector(godot4_run: Any, case_name: str) -> None:
    _check_engine_case(godot4_run, case_name)


# -- layers derived from the spec --------------------------------------------------------------------
def test_one_class_per_type_of_every_dialect() -> None:
    keys = {e.key for d in DIALECTS.values() for e in d.entries}
    assert {c.key for c in VARIANT_CLASSES.values()} == keys
    for d in DIALECTS.values():
        for e in d.entries:
            cls = VARIANT_CLASSES["Godot" + e.name[0].upper() + e.name[1:]] if d.name.startswith("godot4") \
                else next(c for c in VARIANT_CLASSES.values() if c.key == e.key)
            assert cls.key == e.key
            p = cls(dialect=d.name)
            assert p.type == e.id  # the id comes from the dialect, not from the class
            assert p.fields_desc[1].name == "type" and p.fields_desc[3].name == "flags"


def test_fields_mirror_the_layout() -> None:
    assert [f.name for f in GodotVector2.fields_desc[4:-1]] == ["x", "y"]
    t3 = VARIANT_CLASSES["GodotTransform3D"]
    assert [f.name for f in t3.fields_desc[4:-1]][:3] == ["basis_x_x", "basis_y_x", "basis_z_x"]
    assert [f.name for f in GodotString.fields_desc[4:-1]] == ["length", "value", "padding"]
    assert [f.name for f in GodotArray.fields_desc[4:-1]][-2:] == ["count", "items"]
    # a 64-bit flag widens REAL components; Godot 3 math types stay float32 whatever the flag says
    v = GodotVector2(x=1.5, y=2, flags=1)
    assert bytes(v) == struct.pack("<Idd", 5 | 1 << 16, 1.5, 2.0)
    assert GodotVariant(bytes(v)).to_value() == V.Vector2(1.5, 2)
    assert len(bytes(GodotVector2(dialect="godot3", x=1.5, y=2, flags=1))) == 12
    assert bytes(GodotVariant.from_value(V.Vector2(1, 2), "godot4-double"))[:4] == struct.pack("<I", 5 | 1 << 16)


def test_dialect_per_packet() -> None:
    g3 = GodotVariant.from_value({"a": 1}, "godot3")
    g4 = GodotVariant.from_value({"a": 1}, "godot4")
    assert g3.type == 18 and g4.type == 27 and g3.dialect == "godot3"
    assert GodotDictionary().dialect == "godot4"
    assert bytes(GodotDictionary(dialect="godot3")) == encode({}, "godot3")
    assert isinstance(GodotVariant(bytes(g3), dialect="godot3"), GodotDictionary)
    assert not isinstance(GodotVariant(bytes(g3)), GodotDictionary)  # read as godot4: id 18 is Transform3D


def test_show_and_summary() -> None:
    p = GodotVariant.from_value({"frame": 3, "players": [{"id": 1, "pos": V.Vector2(1, 2)}]})
    assert p.summary() == "GodotVariant Dictionary{frame, players}"
    text = p.show(dump=True)
    assert "GodotDictionary" in text and "GodotDictEntry" in text and "GodotVector2" in text
    assert "value     = 'players'" in text
    pkt = Ether() / IP() / UDP(sport=1, dport=2) / p
    assert pkt.summary().endswith("GodotVariant Dictionary{frame, players}")
    two = p.show2(dump=True)
    assert two == text
    assert GodotVariant.from_value(5).summary() == "GodotVariant int 5"
    assert GodotVariant.from_value("hi").summary() == 'GodotVariant String "hi"'


# -- crafting ----------------------------------------------------------------------------------------
def test_craft_from_value_text_and_fields() -> None:
    v = GodotVariant.from_text("Vector2(1, 2)", dialect="godot4")
    assert bytes(v) == encode(V.Vector2(1, 2), "godot4") == bytes.fromhex("050000000000803f00000040")
    assert bytes(GodotVariant(type="Vector2", x=1, y=2)) == bytes(v)
    assert bytes(GodotVector2(x=1, y=2)) == bytes(v)
    assert bytes(GodotInt(value=1 << 40)) == encode(1 << 40, "godot4")  # the 64-bit flag is computed
    assert bytes(GodotString(value="héllo")) == encode("héllo", "godot4")
    d = GodotDictionary(items={"a": 1, "b": [2, "x"]})
    assert bytes(d) == encode({"a": 1, "b": [2, "x"]}, "godot4")
    a = GodotArray(dialect="godot3", items=[1, GodotString(value="x"), V.Vector2(1, 2)])
    assert bytes(a) == encode([1, "x", V.Vector2(1, 2)], "godot3")
    state = {"id": 7, "name": "p1", "pos": V.Vector3(1, 2, 3), "hp": 0.75, "tags": ["a", "b"]}
    for d in ("godot3", "godot4", "godot4-double", "godot3-double"):
        assert bytes(GodotVariant.from_value(state, d)) == encode(state, d)
    typed = V.TypedArray(V.ContainerType("builtin", "int"), [1, 2])
    p = GodotVariant.from_value(typed)
    _materialize(p)
    assert p.element_type == 2 and bytes(p) == encode(typed, "godot4")
    assert bytes(GodotArray(element_type=2, items=[1, 2])) == encode(typed, "godot4")


def test_edit_a_dissected_packet() -> None:
    p = GodotVariant(encode({"name": "bob", "hp": 3}, "godot3"), dialect="godot3")
    p.items[0].value.value = "robert"  # length and padding follow
    p.items.append(p.items[1].copy())
    p.items[2].key.value = "mp"
    assert bytes(p) == encode({"name": "robert", "hp": 3, "mp": 3}, "godot3")
    assert p.to_value() == {"name": "robert", "hp": 3, "mp": 3}


def test_malformed_on_purpose() -> None:
    s = GodotString(value="abc", length=99)
    assert bytes(s)[4:8] == struct.pack("<i", 99)
    with pytest.raises(DecodeError):
        s.to_value()
    a = GodotVariant.from_value([1, 2, 3])
    a.count = 1000
    data = bytes(a)
    assert struct.unpack_from("<I", data, 4)[0] == 1000
    back = GodotVariant(data)  # dissects as far as it goes, and builds the same bytes
    assert "malformed" in back.summary() and bytes(back) == data
    assert bytes(GodotString(value="ab", padding=b"\xff\xff")) == encode("ab", "godot4")[:-2] + b"\xff\xff"
    assert bytes(GodotInt(value=5, reserved=7))[1] == 7


def test_framing_layers_craft() -> None:
    pdu = GodotPDU.from_value({"a": 1}, "godot3")
    body = encode({"a": 1}, "godot3")
    assert bytes(pdu) == struct.pack("<I", len(body)) + body
    dbg4 = GodotDebugger.from_message("output", [["hi"], [0]], "godot4", thread=1)
    assert bytes(dbg4) == bytes(GodotPDU.from_value(["output", 1, [["hi"], [0]]], "godot4"))
    assert GodotDebugger(bytes(dbg4)).message() == ("output", 1, [["hi"], [0]])
    dbg3 = GodotDebugger.from_message("output", [["hi"], [0]], "godot3")
    assert len(dbg3.parts) == 4
    back = GodotDebugger(bytes(dbg3), dialect="godot3")
    assert back.message() == ("output", None, [["hi"], [0]]) and bytes(back) == bytes(dbg3)
    ws = GodotWebSocket() / GodotVariant.from_value([1, "x"])
    wire = bytes(ws)
    assert wire[:2] == bytes([0x82, len(encode([1, "x"]))]) and wire[2:] == encode([1, "x"])
    assert GodotWebSocket(wire).to_value() == [1, "x"]


# -- heuristics and ports -----------------------------------------------------------------------------
def _udp(payload: bytes, sport: int = 40000, dport: int = 40001) -> bytes:
    return bytes(Ether() / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=sport, dport=dport) / Raw(payload))


def test_heuristic_and_port_binding() -> None:
    g3 = encode({"a": V.Vector2(1, 2)}, "godot3")
    assert GodotDictionary in Ether(_udp(g3))
    assert Ether(_udp(b"\x47\x45\x54\x20hello"))[UDP].payload.__class__ is Raw
    enable_heuristics(False)
    try:
        assert Raw in Ether(_udp(g3))
    finally:
        enable_heuristics(True)
    # a bound port reads every datagram, with the dialect it was bound with
    ambiguous = encode(V.Color(0.25, 0.5, 0.75, 1), "godot3")  # godot4 reads it as a Plane
    bind_godot_ports(udp=[47000], dialect="godot3")
    try:
        reset_flows()
        p = Ether(_udp(ambiguous, 50000, 47000))
        assert p[GodotVariant].to_value() == V.Color(0.25, 0.5, 0.75, 1)
        assert GodotVariant in Ether(_udp(b"\x01\x02", 50000, 47000))  # malformed, still Godot
    finally:
        unbind_godot_ports(udp=[47000])
    reset_flows()
    assert Ether(_udp(ambiguous, 50000, 47000))[GodotVariant].to_value() == V.Plane(0.25, 0.5, 0.75, 1)


def test_flow_keeps_its_dialect() -> None:
    """Once a flow has sent something only Godot 3 reads, its ambiguous messages read as Godot 3."""
    first = encode(V.Rect2(V.Vector2(1, 2), V.Vector2(3, 4)), "godot3")
    ambiguous = encode(V.Color(0.25, 0.5, 0.75, 1), "godot3")
    Ether(_udp(first, 41000, 41001))
    assert Ether(_udp(ambiguous, 41001, 41000))[GodotVariant].dialect == "godot3"
    assert Ether(_udp(ambiguous, 41001, 41000))[GodotVariant].to_value() == V.Color(0.25, 0.5, 0.75, 1)


# -- robustness ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dialect", ["godot3", "godot4"])
def test_malformed_corpus_dissects_and_builds_back(dialect: str) -> None:
    n = 0
    for m in malformed_corpus(dialect):
        if not m.data:
            continue
        p = GodotVariant(m.data, dialect=dialect)
        p.summary()
        _materialize(p)
        assert bytes(p) == m.data, m.name
        n += 1
    assert n > 500


def test_deep_input_does_not_blow_up() -> None:
    deep = b"\x1c\x00\x00\x00\x01\x00\x00\x00" * 200_000 + encode(1, "godot4")  # past the engine's limit
    p = GodotVariant(deep)
    assert "malformed" in p.summary()
    text = p.show(dump=True)
    assert "GodotOpaque" in text and text.count("GodotArray") == MAX_DEPTH + 1
    assert bytes(p) == deep
    nested: Any = 1
    for _ in range(40):
        nested = [nested]
    q = GodotVariant.from_value(nested)
    assert q.to_value() == nested
    _materialize(q)
    assert bytes(q) == encode(nested, "godot4") and q.to_value() == nested


def test_truncated_and_junk() -> None:
    data = encode({"k": "value", "n": [1, 2]}, "godot4")
    for cut in range(1, len(data)):
        p = GodotVariant(data[:cut])
        p.show(dump=True)
        assert bytes(p) == data[:cut]
    p = GodotVariant(data + b"junk")
    assert p.to_value() == {"k": "value", "n": [1, 2]} and p.payload.load == b"junk"


def test_fuzz_10000_packets_build_and_dissect() -> None:
    random.seed(1234)
    template = GodotVariant.from_value({"tick": 5, "players": [{"id": 1, "pos": V.Vector3(1, 2, 3)}]}, "godot3")
    makers = [lambda: fuzz(GodotVariant()), lambda: fuzz(GodotVariant(dialect="godot3")),
              lambda: fuzz(GodotDictionary()), lambda: fuzz(template)]
    kinds: set[str] = set()
    for i in range(10_000):
        f = makers[i % len(makers)]()
        data = bytes(f)
        d = "godot3" if i % 4 in (1, 3) else "godot4"
        p = GodotVariant(data, dialect=d)
        p.summary()
        kinds.add(type(p).__name__)
        if i % 10 == 0:
            _materialize(p)
            assert bytes(p) == data
        with contextlib.suppress(DecodeError):  # random packets may or may not be valid Variants
            decode_prefix(data, d, allow_objects=True)
    assert len(kinds) > 30  # random types, not one shape


def test_fuzz_is_usable_under_ip_udp() -> None:
    pkt = IP(dst="127.0.0.1") / UDP(sport=4243, dport=4242) / fuzz(GodotVariant(dialect="godot3"))
    outs = {bytes(pkt) for _ in range(20)}
    assert len(outs) > 10
    for o in outs:
        IP(o).summary()


def test_send_and_sr1_over_a_socket() -> None:
    """Crafted and fuzzed packets go through scapy's sockets; a reply is dissected and matched."""
    server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    server.bind(("127.0.0.1", 0))
    server.settimeout(5)
    client = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    client.connect(server.getsockname())
    got: list[bytes] = []

    def serve() -> None:
        with contextlib.suppress(OSError):
            while len(got) < 21:
                data, peer = server.recvfrom(65535)
                got.append(data)
                server.sendto(encode({"pong": len(got)}, "godot4"), peer)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    ss = SimpleSocket(client, basecls=GodotVariant)
    try:
        for _ in range(20):
            ss.send(fuzz(GodotVariant()))
        for _ in range(20):
            client.recv(65535)  # the replies to the fuzzed packets
        ans = ss.sr1(GodotVariant.from_value(["ping", 1]), timeout=5, verbose=0)
        assert ans is not None and ans.to_value() == {"pong": 21}
        t.join(5)
        assert len(got) == 21 and got[-1] == encode(["ping", 1], "godot4")
        for data in got[:20]:
            GodotVariant(data).show(dump=True)
    finally:
        ss.close()
        server.close()


# -- the README's scapy section ---------------------------------------------------------------------
def test_readme_scapy_examples_run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## scapy layers", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) >= 3
    ns: dict[str, Any] = {}
    for b in blocks:
        exec(compile(b, "README.md", "exec"), ns)  # noqa: S102 - our own documentation
    out = capsys.readouterr().out
    assert "GodotVariant Dictionary{reply, msg, server_tick, spawn}" in out
    assert "GodotVariant Dictionary{frame, players}" in out


def test_dialect_names_resolve() -> None:
    assert GodotVariant.from_value(V.PackedVector4Array([(1, 2, 3, 4)]), "godot4").type == 38
    assert GodotVariant.from_value(1, "godot4@4.2").dialect == "godot4@4.2"
    with pytest.raises(ValueError, match="no PackedVector4Array"):
        bytes(VARIANT_CLASSES["GodotPackedVector4Array"](dialect=get_dialect("godot4@4.2")))


def test_classnames_module_is_current():
    """scapy/classnames.py binds every generated layer class by name; it must match the registries."""
    from godot_dissect.scapy import classnames, classnames_gen

    assert classnames_gen.TARGET.read_text(encoding="utf-8") == classnames_gen.generate()
    assert classnames.GodotVector3 is VARIANT_CLASSES["GodotVector3"]
