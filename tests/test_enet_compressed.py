"""Real compressed ENet traffic: captures/godot3-enet-compressed (tools/captures/make_multiplayer_captures.py).

Four Godot 3.2.3 server/client pairs, one per NetworkedMultiplayerENet.compression_mode. The truth
comes from outside godot_dissect: the engines' prints (the golden) and the codecs the engine itself
ran (``NAME.enet.jsonl``: each compressed body's size and SHA-256 after libenet's range coder or
Godot's Compression::decompress, commands walked by the capture driver). Nothing on the wire says
which codec a pair uses, so every test passes the pair's mode, as a user passes --enet-compression.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from godot_dissect.enet import EnetReassembler, compress, parse_datagram
from godot_dissect.pcap.packets import segments
from godot_dissect.pcap.reader import read_pcap
from godot_dissect.spec.enet import COMPRESSIONS_BY_NAME

from .test_captures_multiplayer import compare

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ROOT / "captures"
NAME = "godot3-enet-compressed"
MANIFEST = json.loads((CAPTURES / "manifest.json").read_text(encoding="utf-8"))
ENTRY = MANIFEST.get(NAME)
PCAP = CAPTURES / f"{NAME}.pcapng"
pytestmark = pytest.mark.skipif(ENTRY is None or not PCAP.exists(), reason=f"{NAME} not made yet")
MODES = sorted(ENTRY["pairs"]) if ENTRY else []


def _lines(suffix: str) -> list[dict[str, Any]]:
    return [json.loads(ln) for ln in (CAPTURES / f"{NAME}.{suffix}").read_text(encoding="utf-8").splitlines()]


GOLDEN = _lines("golden.jsonl") if ENTRY else []
DATAGRAMS = {d["frame"]: d for d in _lines("enet.jsonl")} if ENTRY else {}


def needs_codec(mode: str) -> None:
    if mode == "zstd":
        pytest.importorskip("zstandard", reason="zstd datagrams need the optional 'zstandard' package")


def pair_ports(mode: str) -> set[int]:
    return set(ENTRY["pairs"][mode]["ports"].values())


def pair_segments(mode: str) -> list[Any]:
    ports = pair_ports(mode)
    return [s for s in segments(str(PCAP)) if s.proto == "udp" and {s.sport, s.dport} <= ports]


def flow(s: Any) -> str:
    return f"udp {s.src}:{s.sport} -> {s.dst}:{s.dport}"


def first_difference(a: bytes, b: bytes) -> str:
    at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return (f"first difference at offset {at}: ours {a[at:at + 8].hex() or 'end'}, "
            f"engine {b[at:at + 8].hex() or 'end'} (lengths {len(a)} / {len(b)})")


def test_pairs_are_the_specs_compression_modes() -> None:
    """The engine printed NetworkedMultiplayerENet.compression_mode back: the spec's numbers must be it."""
    assert sorted(c for c in COMPRESSIONS_BY_NAME if c != "none") == MODES
    for mode, pair in ENTRY["pairs"].items():
        assert COMPRESSIONS_BY_NAME[mode].godot_value == pair["compression_mode"], mode
        assert pair["compressed_datagrams"] > 0 and pair["fragmented_packets"] >= 1
    for g in GOLDEN:
        ports = {int(end.rsplit(":", 1)[1]) for end in g["flow"].split(" ", 1)[1].split(" -> ")}
        assert ports == pair_ports(g["compression"]), g["flow"]


def test_golden_lines_are_consistent() -> None:
    """The golden's own shape: one line per packet in pcap order; each call's bytes are the command,
    the name, argc and the arguments' var2bytes as the engines printed them; the text is built from
    the receiver's var2str of each argument."""
    assert [g["seq"] for g in GOLDEN] == list(range(len(GOLDEN))) and len(GOLDEN) == ENTRY["messages"]
    assert [g["frame"] for g in GOLDEN] == sorted(g["frame"] for g in GOLDEN)
    index: dict[str, int] = defaultdict(int)
    for g in GOLDEN:
        assert g["index"] == index[g["flow"]] and g["kind"] == "multiplayer" and g["golden_source"]
        index[g["flow"]] += 1
        assert ENTRY["pairs"][g["compression"]]["compression_mode"] == g["compression_mode"]
        p = bytes.fromhex(g["hex"])
        if g["command"] not in ("REMOTE_CALL", "REMOTE_SET"):
            continue
        body = g["method"].encode() + b"\0" + (bytes([g["argc"]]) if g["command"] == "REMOTE_CALL" else b"")
        body += b"".join(bytes.fromhex(a["var_to_bytes"]) for a in g["args"])
        assert p[0] == (0 if g["command"] == "REMOTE_CALL" else 1) and p[5:5 + len(body)] == body
        texts = [a["text"] for a in g["args"]]
        text = f"{g['method']}({', '.join(texts)})" if g["command"] == "REMOTE_CALL" else f"{g['method']} = {texts[0]}"
        if "text" in g:
            assert g["text"] == text
        else:
            assert g["text_sha256"] == hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize("mode", MODES)
def test_every_datagram_decompresses_and_parses_like_the_engine(mode: str) -> None:
    needs_codec(mode)
    problems = []
    compressed = 0
    for s in pair_segments(mode):
        truth = DATAGRAMS[s.frame]
        assert truth["flow"] == flow(s) and truth["compression"] == mode
        dg = parse_datagram(s.payload, mode)
        where = f"frame {s.frame} ({truth['flow']})"
        if dg.compressed != truth["compressed"]:
            problems.append(f"{where}: COMPRESSED bit {dg.compressed}, the header says {truth['compressed']}")
            continue
        if dg.error is not None:
            problems.append(f"{where}: {dg.error}")
            continue
        if dg.compressed:
            compressed += 1
            plain = dg.decompressed or b""
            if (len(plain), hashlib.sha256(plain).hexdigest()) != (truth["decompressed_size"],
                                                                   truth["decompressed_sha256"]):
                other = "the same size, other bytes" if len(plain) == truth["decompressed_size"] else \
                    f"{truth['decompressed_size']} bytes"
                problems.append(f"{where}: {mode} decompresses {truth['compressed_size']} bytes to {len(plain)}, "
                                f"the engine's codec to {other}")
                continue
            assert dg.padding == truth.get("padding", 0)
        ours = [(c.name, c.channel, c.reliable_seq, len(c.data) if c.data is not None else None)
                for c in dg.commands]
        theirs = [(c["command"], c["channel"], c["reliable_seq"], c.get("data_length")) for c in truth["commands"]]
        if ours != theirs:
            problems.append(f"{where}: commands {ours}, the driver walked {theirs}")
    assert not problems, "\n".join(problems[:20])
    assert compressed == ENTRY["pairs"][mode]["compressed_datagrams"]


@pytest.mark.parametrize("mode", MODES)
def test_reassembled_packets_are_the_engines_calls(mode: str) -> None:
    """ENet layer only: decompress, parse, reassemble (fragments of compressed datagrams too) and
    compare each packet with the golden's ``hex`` (checked against the engines' prints), in order."""
    needs_codec(mode)
    reassemblers: dict[str, EnetReassembler] = defaultdict(EnetReassembler)
    got: dict[str, list[Any]] = defaultdict(list)
    for s in pair_segments(mode):
        for p in reassemblers[flow(s)].feed(parse_datagram(s.payload, mode), s.frame, s.time):
            assert p.error is None, f"frame {s.frame}: {p.error}"
            got[flow(s)].append(p)
    want: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for g in GOLDEN:
        if g["compression"] == mode:
            want[g["flow"]].append(g)
    assert sorted(got) == sorted(want)
    problems = []
    for fl, lines in want.items():
        packets = got[fl]
        if len(packets) != len(lines):
            problems.append(f"{fl}: {len(packets)} packets, the golden has {len(lines)}")
        for p, g in zip(packets, sorted(lines, key=lambda g: g["index"]), strict=False):
            where = f"{fl} #{g['index']} ({g['command']} {g.get('method', '')}) frame {p.frame}"
            # ENet channel 0 is NetworkedMultiplayerENet's own; 1 and 2 carry [u32 src][i32 dst] + the packet
            body = p.data if p.channel == 0 else p.data[8:]
            if (p.channel, p.frame, p.fragments) != (g["enet_channel"], g["frame"], g.get("enet_fragments", 1)):
                problems.append(f"{where}: channel/frame/fragments {(p.channel, p.frame, p.fragments)}")
            if p.channel != 0 and (int.from_bytes(p.data[:4], "little"),
                                   int.from_bytes(p.data[4:8], "little", signed=True)) != (g["peer_src"],
                                                                                         g["peer_dst"]):
                problems.append(f"{where}: peer header {p.data[:8].hex()}")
            if "hex" in g and body != bytes.fromhex(g["hex"]):
                problems.append(f"{where}: {first_difference(body, bytes.fromhex(g['hex']))}")
    assert not problems, "\n".join(problems[:20])


@pytest.mark.parametrize("mode", ["range_coder", "zlib"])
def test_our_compressor_makes_the_engines_bytes(mode: str) -> None:
    """Where godot_dissect can also compress: the decompressed body compresses back to exactly the wire
    bytes, and what Godot sent uncompressed would not have got shorter (ENet's rule)."""
    compressed = 0
    for s in pair_segments(mode):
        dg = parse_datagram(s.payload, mode)
        if dg.compressed:
            assert dg.decompressed is not None
            again = compress(dg.decompressed, mode)
            assert again == dg.body, f"frame {s.frame}: {first_difference(again, dg.body)}"
            compressed += 1
        else:
            assert len(compress(dg.body, mode)) >= len(dg.body), f"frame {s.frame}"
    assert compressed == ENTRY["pairs"][mode]["compressed_datagrams"] > 0  # the driver's count


def read_pair(mode: str, **options: Any) -> list[Any]:
    ports = pair_ports(mode)
    return [r for r in read_pcap(str(PCAP), enet_compression=mode, **options) if {r.sport, r.dport} <= ports]


def test_read_pcap_with_each_pairs_codec_yields_the_golden_calls() -> None:
    """The whole reader (ENet found by its heuristic): every engine-printed call, argument and path."""
    for mode in MODES:
        needs_codec(mode)
    records = [r for mode in MODES for r in read_pair(mode)]
    problems = compare(NAME, records)
    assert not problems, f"{len(problems)} differences:\n" + "\n".join(problems[:40])
    assert {r.dialect for r in records if r.kind != "enet"} == {"godot3"}


@pytest.mark.parametrize("mode", MODES)
def test_read_pcap_shows_the_handshake_of_a_known_enet_port(mode: str) -> None:
    needs_codec(mode)
    pair = ENTRY["pairs"][mode]
    enet = [r for r in read_pair(mode, enet_ports=[pair["ports"]["server"]]) if r.kind in ("enet", "error")]
    assert [(r.kind, r.command) for r in enet] == [("enet", "CONNECT"), ("enet", "VERIFY_CONNECT"),
                                                   ("enet", "DISCONNECT")]
    connect = enet[0]
    assert connect.fields["data"] == pair["peer_ids"]["client a"] and connect.fields["godot_major"] == 3


def _connect_compressed(mode: str) -> bool:
    """Was the conversation's first datagram, the CONNECT, sent compressed?"""
    return any(d["compressed"] for d in DATAGRAMS.values() if d["compression"] == mode
               and any(c["command"] == "CONNECT" for c in d["commands"]))


def test_the_heuristic_case_is_real() -> None:
    """The next test means something: in this capture some CONNECTs themselves went compressed."""
    assert any(_connect_compressed(m) for m in MODES)


@pytest.mark.parametrize("mode", MODES)
def test_read_pcap_shows_the_compressed_handshake_by_heuristic(mode: str) -> None:
    needs_codec(mode)
    assert [r.command for r in read_pair(mode) if r.kind == "enet"] == ["CONNECT", "VERIFY_CONNECT", "DISCONNECT"]


def test_without_the_codec_compressed_datagrams_are_shown_as_such() -> None:
    """No codec given: each compressed datagram is one record of its own kind (not malformed) whose
    reason names --enet-compression, with its body; the uncompressed ones still decode."""
    mode = "zlib"
    pair = ENTRY["pairs"][mode]
    ports = pair_ports(mode)
    records = [r for r in read_pcap(str(PCAP), enet_ports=[pair["ports"]["server"]]) if {r.sport, r.dport} <= ports]
    assert not [r for r in records if r.kind == "error"]
    shown = [r for r in records if r.kind == "compressed"]
    wire = {s.frame: s.payload for s in pair_segments(mode)}
    assert sorted(r.frame for r in shown) == sorted(f for f in wire if DATAGRAMS[f]["compressed"])
    for r in shown:
        assert "--enet-compression" in r.fields["reason"] and r.error is None
        assert r.raw == wire[r.frame][4 if wire[r.frame][0] & 0x80 else 2:]
    assert any(r.kind in ("rpc", "rset", "simplify_path") for r in records)


def test_a_wrong_codec_gives_one_record_per_compressed_datagram() -> None:
    """--enet-compression zstd on the other pairs' datagrams: each compressed one fails to decompress and
    is reported once (it used to come out twice: the parser's error and a 'codec not named' record)."""
    needs_codec("zstd")
    for mode in MODES:
        if mode == "zstd":
            continue
        ports = pair_ports(mode)
        server = [ENTRY["pairs"][mode]["ports"]["server"]]
        records = [r for r in read_pcap(str(PCAP), enet_compression="zstd", enet_ports=server)
                   if {r.sport, r.dport} <= ports]
        shown = [r.frame for r in records if r.kind in ("error", "compressed")]
        truth = [f for f in (s.frame for s in pair_segments(mode)) if DATAGRAMS[f]["compressed"]]
        assert sorted(shown) == sorted(truth), mode
