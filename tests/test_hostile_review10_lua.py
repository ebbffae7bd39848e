"""Hostile review of the generated Wireshark plugin (lua/godot.lua): hand-built captures through real tshark
with the plugin, in the packet list, -V, two passes and the statistics; the plugin's own work counted in Lua
VM instructions (deterministic: linear work doubles with the input), its values against the Python reader's."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from godot_dissect.fuzz.harness import lua_script

from .test_hostile import VM_COUNTER
from .test_hostile_analysis import _godot4_enet, _inline_path_calls
from .test_hostile_enet import _lua_heap_kb

pytestmark = pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")

#: the plugin's Lua work at 2x the hostile part of the input, at most this times that at 1x (linear work: ~2)
VM_SCALE_RATIO = 2.3


def _vm_steps(path: Path, tmp_path: Path, *args: str) -> int:
    """The plugin's Lua VM instructions (in thousands) over ``path`` with ``-V`` and ``args``; fails on a
    Lua error."""
    counter = tmp_path / "vm_counter.lua"
    counter.write_text(VM_COUNTER)
    r = subprocess.run(["tshark", "-n", "-X", f"lua_script:{lua_script()}", "-X", f"lua_script:{counter}",
                        "-r", str(path), "-V", *args], capture_output=True, text=True, errors="replace", timeout=600)
    assert r.returncode == 0 and "Lua Error" not in r.stdout and "Lua Error" not in r.stderr, r.stderr[-500:]
    steps = [int(line.split()[1]) for line in r.stderr.splitlines() if line.startswith("vm-steps ")]
    assert len(steps) == 1, r.stderr[-300:]
    return steps[0]


def _scales(build, sizes: tuple[int, int], tmp_path: Path, *args: str) -> None:  # noqa: ANN001
    small, large = sizes
    steps = []
    for n in sizes:
        build(tmp_path / f"c{n}.pcap", n)
        steps.append(_vm_steps(tmp_path / f"c{n}.pcap", tmp_path, *args))
    assert steps[0] > 100, f"the plugin ran {steps[0]}k VM instructions: was it counted?"
    assert steps[1] <= VM_SCALE_RATIO * steps[0] * large / (2 * small), \
        f"{large / small:.0f}x the input took {steps[1] / steps[0]:.2f}x the Lua VM instructions ({steps})"


def test_inline_path_calls_are_linear_in_the_plugin(tmp_path: Path) -> None:
    """A Godot 4 REMOTE_CALL naming its node by an inline path looked for the path's md5 by scanning the
    sender's whole path cache (multiplayer.lua resolve(): ``for id, path in pairs(st.paths[sender])``), so n
    SIMPLIFY_PATHs then n inline calls cost n^2 (2000 -> 4000 -> 8000: 18 M, 61 M, 218 M VM instructions).
    The Python reader keeps path -> md5 of the latest announcement (session.py path_md5s)."""
    _scales(_inline_path_calls, (2000, 4000), tmp_path)


def test_inline_path_call_gets_the_md5_of_the_latest_announcement_in_the_plugin(tmp_path: Path) -> None:
    """The same path announced twice (cache ids 5 then 1, md5s of different method lists), then a call naming
    it inline: the engine's receiver holds the latest announcement's md5 (the Python reader: path_md5s), so
    ``rpc_names`` names the method; the plugin's scan of the cache took whichever id ``pairs`` met last (5)."""
    from godot_dissect.multiplayer import godot4 as g4
    from godot_dissect.multiplayer import rpc_md5
    from godot_dissect.pcap.reader import read_pcap

    from .test_lua import tshark

    pcap = tmp_path / "md5.pcap"
    _godot4_enet(pcap, [g4.build_simplify_path("f" * 32, 5, "/root/Main"),
                        g4.build_simplify_path(rpc_md5(["chat", "move"]), 1, "/root/Main"),
                        g4.build_rpc(1, [], node_path="/root/Main")])
    names = {"/root/Main": ["chat", "move"]}
    (expected,) = [r.method for r in read_pcap(str(pcap), rpc_names=names) if getattr(r, "kind", None) == "rpc"]
    assert expected == "move"
    out = tshark(pcap, "-o", "godot_mp.rpc_names:/root/Main=chat,move", "-T", "fields", "-e", "godot_mp.rpc.method",
                 "-Y", 'godot_mp.kind == "rpc"')
    assert out.split() == [expected]


def _flows_then_godot(path: Path, flows: int) -> None:
    """``flows`` one-byte UDP datagrams of distinct directions (neither Godot nor ENet), then a Godot 4 ENet
    connection: a SIMPLIFY_PATH and five RPCs."""
    from godot_dissect.enet import build as enet
    from godot_dissect.enet.sender import EnetSender
    from godot_dissect.fuzz.pcapout import PcapWriter
    from godot_dissect.multiplayer import godot4 as g4

    from .test_hostile_analysis import CLIENT, GODOT4_CHANNELS, SERVER

    w = PcapWriter(path)
    t = 0.0
    for i in range(flows):
        t += 1e-6
        w.udp(t, (f"10.9.{i >> 16 & 255}.{i >> 8 & 255}", 1024 + (i & 255)), ("10.8.0.1", 53), b"\x01")
    w.udp(t, CLIENT, SERVER, enet.build_datagram(0xFFF, [enet.connect(0, 0x1234, 77, GODOT4_CHANNELS)], sent_time=1))
    w.udp(t, SERVER, CLIENT, enet.build_datagram(0, [enet.verify_connect(0, 0x1234, GODOT4_CHANNELS)], sent_time=2))
    sender = EnetSender(GODOT4_CHANNELS)
    for p in [g4.build_simplify_path("a" * 32, 1, "/root/Main")] + [g4.build_rpc(3, [i], node_id=1) for i in range(5)]:
        t += 1e-3
        w.udp(t, CLIENT, SERVER, enet.build_datagram(0, sender.send(1, p), sent_time=5))
    w.close()


def test_statistics_after_a_flood_of_flows(tmp_path: Path) -> None:
    """``-z godot,rpc`` / ``godot,bandwidth`` keep MAX_ROWS directions; the plugin returned before counting a
    frame's messages once that many directions were seen, so MAX_ROWS non-Godot flows (here 100,000 one-byte
    UDP datagrams) before a game left both tables empty. ``godot-dissect stats`` folds the frames of the
    later directions into one row and still counts their messages: the same rows now (the bandwidth rows of
    the directions that carried messages: frames 0, wire bytes their messages' shares, as traffic.py has)."""
    pytest.importorskip("pandas")
    from godot_dissect.spec.stats import MAX_ROWS
    from godot_dissect.stats import profile

    from .test_lua import tshark
    from .test_lua_layers import _cell, _lua_table

    pcap = tmp_path / "flows.pcap"
    _flows_then_godot(pcap, MAX_ROWS)
    out = tshark(pcap, "-q", "-z", "godot,rpc", "-z", "godot,bandwidth")
    p = profile(str(pcap))
    keys = ("sender", "receiver", "node", "kind", "name", "transfer", "channel", "relayed", "count", "app_bytes",
            "wire_bytes")
    want = sorted(tuple(_cell(round(r[k], 3) if k == "wire_bytes" else r[k]) for k in keys)
                  for r in p.rpc.to_dict("records") if r["count"] > 0)
    got = sorted(tuple(str(float(r[k])) if k == "wire_bytes" else r[k] for k in keys)
                 for r in _lua_table(out, "(godot-dissect stats --table rpc)"))
    assert len(want) == 1 and got == [(*want[0][:-1], str(float(want[0][-1])))]
    bkeys = ("src", "src_peer", "dst", "dst_peer", "frames", "wire_bytes", "messages", "app_bytes")
    bwant = sorted(tuple(_cell(r[k]) for k in bkeys) for r in p.bandwidth.to_dict("records") if r["messages"] > 0)
    bgot = sorted(tuple(r[k] for k in bkeys) for r in _lua_table(out, "(godot-dissect stats --table bandwidth)")
                  if r["messages"] != "0")
    assert len(bwant) == 1 and bgot == bwant



def _info(pcap: Path, *args: str) -> list[str]:
    from .test_lua import tshark

    return tshark(pcap, "-T", "fields", "-e", "frame.number", "-e", "frame.protocols", "-e", "_ws.col.Info",
                  *args).splitlines()


def _junk_then_godot4_enet(path: Path) -> None:
    """A 3-byte datagram (neither ENet nor a Variant), then a Godot 4 ENet connection on the same ports."""
    from godot_dissect.enet import build as enet
    from godot_dissect.enet.sender import EnetSender
    from godot_dissect.fuzz.pcapout import PcapWriter
    from godot_dissect.multiplayer import godot4 as g4

    from .test_hostile_analysis import CLIENT, GODOT4_CHANNELS, SERVER

    w = PcapWriter(path)
    w.udp(0, CLIENT, SERVER, b"\xff\xff\xff")
    w.udp(0.1, CLIENT, SERVER, enet.build_datagram(0xFFF, [enet.connect(0, 0x1234, 77, GODOT4_CHANNELS)], sent_time=1))
    w.udp(0.2, SERVER, CLIENT, enet.build_datagram(0, [enet.verify_connect(0, 0x1234, GODOT4_CHANNELS)], sent_time=2))
    sender = EnetSender(GODOT4_CHANNELS)
    for i, p in enumerate([g4.build_simplify_path("a" * 32, 1, "/root/Main"), g4.build_rpc(3, [1], node_id=1)]):
        w.udp(0.3 + i / 10, CLIENT, SERVER, enet.build_datagram(0, sender.send(1, p), sent_time=5))
    w.close()


@pytest.mark.parametrize("capture", ["real-compressed", "junk-first"])
def test_enet_datagrams_before_the_conversation_is_found_read_the_same_in_two_passes(capture: str,
                                                                                    tmp_path: Path) -> None:
    """The ENet heuristic confirms a conversation at its first datagram that looks like ENet and then set it
    as the UDP conversation's dissector (pinfo.conversation: from frame 0), so with -2 (or a redraw in
    Wireshark) the datagrams BEFORE that one were claimed as ENet too: the real engine's first two compressed
    datagrams "ENet compressed (34 bytes)" where one pass (and the Python reader) leave them alone, a junk
    datagram before a game a malformed ENet datagram. Each frame's protocols and Info: the same in both."""
    from godot_dissect.pcap.reader import read_pcap

    if capture == "real-compressed":
        pcap = Path(__file__).resolve().parent.parent / "captures" / "godot3-enet-compressed.pcapng"
    else:
        pcap = tmp_path / "junk-first.pcap"
        _junk_then_godot4_enet(pcap)
    assert 1 not in {r.frame for r in read_pcap(str(pcap))}  # the reader leaves the first datagram alone
    one, two = _info(pcap), _info(pcap, "-2")
    assert len(one) == len(two) > 4
    assert [(a, b) for a, b in zip(one, two, strict=True) if a != b] == []


#: elements of the hostile Array: more than Wireshark's gui.max_tree_items (1,000,000) in one message
HUGE_ARRAY = 1_100_000


def _huge_array_over_tcp(path: Path) -> None:
    """A Godot 3 put_var PDU of 4.4 MB (under MAX_PDU): an Array of HUGE_ARRAY nulls."""
    import struct

    from godot_dissect.fuzz.hostile import _Tcp
    from godot_dissect.fuzz.pcapout import PcapWriter

    w = PcapWriter(path)
    t = _Tcp(w, ("10.0.0.1", 40000), ("10.0.0.2", 6001), t=1)
    body = struct.pack("<II", 19, HUGE_ARRAY) + bytes(4 * HUGE_ARRAY)  # (Godot 3 Array: type 19; null: 4 zeros)
    t.send_segments(struct.pack("<I", len(body)) + body, 60000)
    t.close()
    w.close()


def _huge_array_rpc_over_enet(path: Path) -> None:
    """A Godot 4 RPC whose argument is an Array of HUGE_ARRAY nulls, in ENet fragments."""
    import struct

    from godot_dissect.codec import encode
    from godot_dissect.enet import build as enet
    from godot_dissect.enet.sender import EnetSender
    from godot_dissect.fuzz.pcapout import PcapWriter
    from godot_dissect.multiplayer import godot4 as g4

    from .test_hostile_analysis import CLIENT, GODOT4_CHANNELS, SERVER

    placeholder = encode("zz", "godot4")
    rpc = g4.build_rpc(1, ["zz"], node_id=1)
    assert rpc.endswith(placeholder)
    rpc = rpc[:-len(placeholder)] + struct.pack("<II", 28, HUGE_ARRAY) + bytes(4 * HUGE_ARRAY)  # (Godot 4 Array: 28)
    w = PcapWriter(path)
    w.udp(0, CLIENT, SERVER, enet.build_datagram(0xFFF, [enet.connect(0, 0x1234, 77, GODOT4_CHANNELS)], sent_time=1))
    w.udp(0, SERVER, CLIENT, enet.build_datagram(0, [enet.verify_connect(0, 0x1234, GODOT4_CHANNELS)], sent_time=2))
    sender = EnetSender(GODOT4_CHANNELS)
    t = 0.1
    for packet in (g4.build_simplify_path("a" * 32, 1, "/root/Main"), rpc):
        for c in sender.send(1, packet):
            t += 1e-5
            w.udp(t, CLIENT, SERVER, enet.build_datagram(0, [c], sent_time=3))
    w.close()


@pytest.mark.parametrize("transport", ["tcp", "enet"])
def test_a_message_of_a_million_variants_is_shown_in_part_and_said(transport: str, tmp_path: Path) -> None:
    """An Array of 1.1 million nulls (4.4 MB, a value the engine reads) put one item per element in the tree,
    and Wireshark stops a packet at gui.max_tree_items (1,000,000) items: "[Dissector bug, protocol GODOT:
    Adding godot.type would put more than 1000000 items in the tree ...]", the rest of the packet lost (and
    6 s, 735 MB for the ENet RPC). At most LUA_MAX_SHOWN Variants are shown a packet; the rest are read,
    checked and said in one item with expert info; the Count is still the reader's."""
    from godot_dissect.pcap.reader import read_pcap
    from godot_dissect.spec.transports import LUA_MAX_SHOWN

    from .test_lua import tshark

    pcap = tmp_path / f"{transport}.pcap"
    (_huge_array_over_tcp if transport == "tcp" else _huge_array_rpc_over_enet)(pcap)
    args = ("-o", "godot.tcp_ports:6001") if transport == "tcp" else ()
    values = [r.value[0] if transport == "enet" else r.value for r in read_pcap(str(pcap), ports=(6001,))
              if r.error is None and r.kind in ("variant", "rpc")]
    assert [len(v) for v in values] == [HUGE_ARRAY]
    for extra in ((), ("-o", "godot.details:TRUE", "-o", "godot.max_depth:200")):
        out = tshark(pcap, "-V", *args, *extra)
        assert "Dissector bug" not in out and "more than 1000000 items" not in out
        said = f"… {HUGE_ARRAY - LUA_MAX_SHOWN} more not shown (at most {LUA_MAX_SHOWN} Variants are shown a packet)"
        assert f"[Expert Info (Note/Undecoded): {said}]" in out
        assert f"Count: {HUGE_ARRAY}" in out


def test_a_spawn_of_many_sync_ids_keeps_the_path_cache(tmp_path: Path) -> None:
    """The plugin's caches of a conversation (paths, md5s, spawned nodes, sync ids) shared ONE count of
    MAX_CACHE_ENTRIES and were all forgotten together past it, so a SPAWN listing 70,000 sync ids (one ENet
    packet) made the node of every later RPC unknown ("RPC node#1.method#3"); the Python reader keeps
    MAX_CACHE_ENTRIES per table and sender, oldest out first (session.py _remember): "/root/Main"."""
    from godot_dissect.enet import build as enet
    from godot_dissect.enet.sender import EnetSender
    from godot_dissect.fuzz.pcapout import PcapWriter
    from godot_dissect.multiplayer import godot4 as g4
    from godot_dissect.pcap.reader import read_pcap
    from godot_dissect.spec.multiplayer import MAX_CACHE_ENTRIES

    from .test_hostile_analysis import CLIENT, GODOT4_CHANNELS, SERVER
    from .test_lua import tshark

    pcap = tmp_path / "sync.pcap"
    w = PcapWriter(pcap)
    w.udp(0, CLIENT, SERVER, enet.build_datagram(0xFFF, [enet.connect(0, 0x1234, 77, GODOT4_CHANNELS)], sent_time=1))
    w.udp(0, SERVER, CLIENT, enet.build_datagram(0, [enet.verify_connect(0, 0x1234, GODOT4_CHANNELS)], sent_time=2))
    sender = EnetSender(GODOT4_CHANNELS)
    t = 0.1
    sync_ids = list(range(MAX_CACHE_ENTRIES + 4464))
    for p in (g4.build_simplify_path("a" * 32, 1, "/root/Main"), g4.build_spawn(1, 1, 7, "Bot", sync_ids),
              g4.build_rpc(3, [1], node_id=1)):
        for c in sender.send(1, p):
            t += 1e-5
            w.udp(t, CLIENT, SERVER, enet.build_datagram(0, [c], sent_time=3))
    w.close()
    expected = [r.node for r in read_pcap(str(pcap)) if r.kind in ("spawn", "rpc")]
    assert expected == ["/root/Main", "/root/Main"]
    out = tshark(pcap, "-Y", 'godot_mp.kind == "spawn" || godot_mp.kind == "rpc"', "-T", "fields",
                 "-e", "godot_mp.rpc.node")
    assert out.split() == expected


def _other_udp_flows(path: Path, flows: int) -> None:
    """One 12-byte datagram (0xff bytes: neither a Variant nor ENet) on each of ``flows`` UDP flows."""
    from godot_dissect.fuzz.pcapout import PcapWriter

    w = PcapWriter(path)
    for i in range(flows):
        w.udp(i * 1e-6, (f"10.9.{i >> 16 & 255}.{i >> 8 & 255}", 1024 + (i & 255)), ("10.8.0.1", 9999), b"\xff" * 12)
    w.close()


#: Lua heap a frame of another protocol's flow may keep (the per-frame "not Godot" of a later pass: ~20 bytes)
HEAP_PER_OTHER_FLOW = 200


@pytest.mark.parametrize("layer", ["godot", "enet"])
def test_memory_of_many_other_udp_flows(layer: str, tmp_path: Path) -> None:
    """Every UDP flow the heuristics looked at kept a conversation, even when nothing in it was Godot or ENet:
    the Variant heuristic ~2.2 KB a flow (a dialect guess of five candidates), the ENet one ~0.65 KB (its
    conversation and lookup tables): 100,000 one-datagram flows of another protocol left a 286 MB Lua heap
    (tshark 591 MB, 234 MB without the plugin). The Python reader keeps MAX_CONVERSATIONS. Heap at 4x the
    flows: at most HEAP_PER_OTHER_FLOW more bytes a flow. (layer: the heuristic measured, the other off)"""
    off = ("-o", "enet.heuristic:FALSE") if layer == "godot" else ("-o", "godot.heuristics:FALSE")
    heap = {}
    for n in (5000, 20000):
        _other_udp_flows(tmp_path / f"f{n}.pcap", n)
        heap[n], _ = _lua_heap_kb(tmp_path, tmp_path / f"f{n}.pcap", *off)
    per_flow = (heap[20000] - heap[5000]) * 1024 / 15000
    assert per_flow <= HEAP_PER_OTHER_FLOW, f"{per_flow:.0f} bytes a flow ({heap})"


def test_websocket_messages_before_the_conversation_is_found_read_the_same_in_two_passes(tmp_path: Path) -> None:
    """The WebSocket heuristic took every binary message of a conversation once one had read as a Variant, so
    a second pass (-2, or a redraw) claimed the messages BEFORE that one too: a 12-byte binary message ahead of
    a Godot String was "WebSocket Binary" in one pass and "Godot ... Malformed" in two."""
    from godot_dissect.fuzz.hostile import GOOD, _Tcp, _ws_handshake
    from godot_dissect.fuzz.pcapout import PcapWriter

    pcap = tmp_path / "ws.pcap"
    w = PcapWriter(pcap)
    tcp = _Tcp(w, ("10.0.0.1", 40000), ("10.0.0.2", 9080))
    _ws_handshake(tcp)
    for payload in (b"\xff" * 12, GOOD, b"\xff" * 12):
        tcp.send(bytes((0x82, len(payload))) + payload, c2s=False)  # a binary frame with FIN, 7-bit length
    tcp.close()
    w.close()
    one, two = _info(pcap), _info(pcap, "-2")
    assert len(one) == len(two) > 6 and sum("godot" in line.split("\t")[1] for line in one) == 2
    assert [(a, b) for a, b in zip(one, two, strict=True) if a != b and "[provisional" not in a] == []


#: script paths of typed Arrays the engine refuses (not res://), with every quoting case of Python's repr()
SCRIPT_PATHS = ["", "it's", 'say "hi"', "both ' and \"", "back\\slash", "tab\there", "nl\n", "\x01\x7f", "caf\u00e9",
                "\u0085\u00a0\u00ad", "node"]


def test_error_reasons_quote_names_as_the_reader_does(tmp_path: Path) -> None:
    """The reader quotes a refused script path or debugger message name with Python's repr() ('node', "it's",
    '\\x01'); the plugin used Lua's %q ("node", "\\1"), so the same bytes gave another godot.error text."""
    import re
    import struct

    from godot_dissect.codec import encode
    from godot_dissect.fuzz.hostile import _Tcp
    from godot_dissect.fuzz.pcapout import PcapWriter
    from godot_dissect.pcap.reader import read_pcap

    from .test_lua import tshark

    paths = tmp_path / "paths.pcap"
    w = PcapWriter(paths)
    for i, p in enumerate(SCRIPT_PATHS):  # a Godot 4 Array typed by a script path (element kind 3), empty
        b = p.encode()
        body = struct.pack("<II", 28 | 3 << 16, len(b)) + b + bytes(-len(b) % 4) + struct.pack("<I", 0)
        w.udp(i * 1e-3, ("10.0.0.1", 5000), ("10.0.0.2", 6002), body)
    w.close()
    debugger = tmp_path / "debugger.pcap"
    w = PcapWriter(debugger)
    tcp = _Tcp(w, ("10.0.0.1", 40000), ("10.0.0.2", 6007))
    for name in ("output", "error"):  # a Godot 3 message name, then no argument count
        tcp.send(b"".join(struct.pack("<I", len(v)) + v for v in (encode(name, "godot3"), encode("x", "godot3"))))
    tcp.close()
    w.close()
    for pcap, dialect, args in ((paths, "godot4", ("-o", "godot.udp_ports:6002")), (debugger, "godot3", ())):
        want = [re.sub(r"^offset \d+: | \(ERR_\w+\)$", "", str(r.error))
                for r in read_pcap(str(pcap), dialect=dialect, ports=(6002,)) if r.error]
        got = [line.split("\t", 1)[1].removeprefix("offset 4: ")
               for line in tshark(pcap, *args, "-o", f"godot.dialect:{dialect}", "-T", "fields", "-e", "frame.number",
                                  "-e", "godot.error").splitlines() if line.split("\t", 1)[1]]
        assert len(want) in (len(SCRIPT_PATHS), 2) and got == want


def test_a_malformed_rpc_argument_is_named_by_its_index(tmp_path: Path) -> None:
    """The reader names the argument an RPC fails in ("argument 1: String is not valid UTF-8", message.py
    decode_values); the plugin said "argument: ..." for every one (multiplayer.lua one_variant)."""
    import struct

    from godot_dissect.codec import encode
    from godot_dissect.multiplayer import godot4 as g4
    from godot_dissect.pcap.reader import read_pcap

    from .test_lua import tshark

    placeholder = encode("zz", "godot4")
    rpc = g4.build_rpc(1, [7, "zz"], node_id=1)
    rpc = rpc[:-len(placeholder)] + struct.pack("<II", 4, 4) + b"\xed\xa0\x80\0"  # a String of a lone surrogate
    pcap = tmp_path / "arg.pcap"
    _godot4_enet(pcap, [g4.build_simplify_path("a" * 32, 1, "/root/Main"), rpc])
    (want,) = [str(r.error) for r in read_pcap(str(pcap)) if r.error]
    assert want == "offset 14: argument 1: String is not valid UTF-8"
    assert tshark(pcap, "-T", "fields", "-e", "godot_mp.error", "-Y", "godot_mp.error").split("\n")[0] == want
