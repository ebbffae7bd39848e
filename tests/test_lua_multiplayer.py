"""The generated ENet and multiplayer dissectors (lua/godot.lua) in real tshark, against the Python reader.

Every multiplayer capture is read by tshark with the committed plugin and by
``godot_dissect.pcap.reader.read_pcap``; per frame, the multiplayer messages must agree: kind, command,
node path, method (3.x name) or method id (4.x), peer, argument types and the values of plain
arguments. ENet itself is compared with ``godot_dissect.enet.parse_datagram`` command by command, on
the real datagrams and on truncated and mutated copies (same error offset and reason, no Lua error).
"""

from __future__ import annotations

import json
import random
import re
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest

from godot_dissect.enet import looks_like_enet, parse_datagram
from godot_dissect.lua.generator import generate
from godot_dissect.pcap.reader import read_pcap
from godot_dissect.spec import get_dialect
from godot_dissect.values import type_key

from . import test_lua as TL
from .resegment import _PcapWriter

ROOT = Path(__file__).resolve().parent.parent
LUA = ROOT / "lua" / "godot.lua"
CAPTURES = ROOT / "captures"
MANIFEST = json.loads((CAPTURES / "manifest.json").read_text())
MP_NAMES = sorted(n for n in MANIFEST if "multiplayer" in n or "enet" in n)
ENET_NAMES = [n for n in MP_NAMES if "enet" in n]

pytestmark = pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")


def mp_frames(out: str) -> dict[int, list[list]]:
    """frame number -> the godot_mp items of that frame."""
    return TL.json_frames(out, layer="godot_mp")


def pcap_of(name: str) -> Path:
    return CAPTURES / MANIFEST[name]["pcap"]


# -- tshark's multiplayer messages ------------------------------------------------------------------------

def _first(pairs: list, key: str) -> Any:
    return next((v for k, v in pairs if k == key), None)


def lua_messages(items: list[list]) -> list[dict[str, Any]]:
    """The multiplayer messages of one frame's godot items, in order; a relayed packet replaces the SYS
    RELAY that carried it (as the Python records do)."""
    out: list[dict[str, Any]] = []
    for pairs in items:
        command = _first(pairs, "godot_mp.command")
        if command is None:
            continue  # a transport header item
        if _first(pairs, "godot_mp.relay") is not None and out and out[-1]["command"] == "SYS":
            out.pop()
        method_id = _first(pairs, "godot_mp.rpc.method_id")
        peer = _first(pairs, "godot_mp.peer")
        out.append({
            "kind": "error" if _first(pairs, "godot_mp.error") is not None else _first(pairs, "godot_mp.kind"),
            "command": command,
            "node": _first(pairs, "godot_mp.rpc.node"),
            "method": _first(pairs, "godot_mp.rpc.method") or _first(pairs, "godot_mp.rset.property"),
            "method_id": None if method_id is None else int(method_id),
            "peer": None if peer is None else int(peer),
            "args": [v for k, v in pairs if k == "godot_mp.rpc.arg"],
        })
    return out


def _type_name(v: Any, dialect: str) -> str:
    if isinstance(v, (bytes, bytearray)):
        return get_dialect(dialect).by_key("PACKED_BYTE_ARRAY").name  # type: ignore[union-attr]
    return get_dialect(dialect).by_key(type_key(v)).name  # type: ignore[union-attr]


def _plain_label(v: Any, name: str) -> str | None:
    """The label tshark gives a plain value (bool, int, short printable String), else None."""
    if isinstance(v, bool):
        return f"{name}: {'true' if v else 'false'}"
    if isinstance(v, int):
        return f"{name}: {v}"
    if isinstance(v, str) and len(v) <= 40 and v.isprintable() and '"' not in v and "\\" not in v:
        return f'{name}: "{v}"'
    return None


def _args(r: Any) -> list[Any]:
    """A record's arguments as tshark lists them (godot_mp.rpc.arg): RPC arguments, the RSET value."""
    if r.kind == "rpc":
        return list(r.value or ())
    return [r.value] if r.kind == "rset" else []


def python_messages(path: Path, **kw: Any) -> dict[int, list[dict[str, Any]]]:
    frames: dict[int, list[dict[str, Any]]] = {}
    for r in read_pcap(str(path), **kw):
        if r.kind == "enet":
            continue
        args = _args(r)
        frames.setdefault(r.frame, []).append({
            "kind": r.kind, "command": r.command, "node": r.node, "method": r.method, "method_id": r.method_id,
            "peer": r.peer if r.kind in ("peer", "sys") else None, "args": args, "dialect": r.dialect,
            "error": r.error,
        })
    return frames


def compare_frame(frame: int, got: list[dict[str, Any]], want: list[dict[str, Any]]) -> list[str]:
    if len(got) != len(want):
        return [f"frame {frame}: tshark {len(got)} messages {[g['command'] for g in got]}, "
                f"python {len(want)} {[w['command'] for w in want]}"]
    out = []
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        where = f"frame {frame} message {i}"
        if w["kind"] == "error":
            if g["kind"] != "error":
                out.append(f"{where}: python error {w['error']!r}, tshark {g['kind']}")
            continue
        for key in ("kind", "command", "node", "method", "method_id"):
            if g[key] != w[key]:
                out.append(f"{where}: {key} tshark {g[key]!r} python {w[key]!r}")
        if w["kind"] == "sys" and w["peer"] is not None and g["peer"] != w["peer"]:
            out.append(f"{where}: peer tshark {g['peer']} python {w['peer']}")
        if w["kind"] == "peer" and g["peer"] != w["peer"]:
            out.append(f"{where}: peer tshark {g['peer']} python {w['peer']}")
        if w["kind"] in ("rpc", "rset"):
            if len(g["args"]) != len(w["args"]):
                out.append(f"{where}: {len(g['args'])} arguments in tshark, {len(w['args'])} in python")
                continue
            for j, (label, v) in enumerate(zip(g["args"], w["args"], strict=True)):
                name = _type_name(v, w["dialect"])
                if re.match(r"[A-Za-z0-9_]+", label).group(0) != name:  # type: ignore[union-attr]
                    out.append(f"{where} argument {j}: tshark {label!r}, python type {name}")
                plain = _plain_label(v, name)
                if plain is not None and label != plain:
                    out.append(f"{where} argument {j}: tshark {label!r}, python {plain!r}")
    return out


@pytest.fixture(scope="module")
def tshark_frames() -> dict[str, dict[int, list[list]]]:
    """One tshark run per capture (-V text checked for Lua errors by TL.tshark too)."""
    out = {}
    for name in MP_NAMES:
        out[name] = mp_frames(TL.tshark(pcap_of(name), "-T", "json", "-J", "frame godot_mp enet"))
    return out


@pytest.mark.parametrize("name", MP_NAMES)
def test_multiplayer_messages_match_the_python_reader(name: str, tshark_frames: dict) -> None:
    lua = tshark_frames[name]
    py = python_messages(pcap_of(name))
    diffs: list[str] = []
    compared = 0
    for frame in sorted(set(py) | {f for f, items in lua.items() if lua_messages(items)}):
        want = py.get(frame, [])
        if any(w["command"] == "ENET" for w in want):
            continue  # a compressed datagram without the codec: see the compressed test
        got = lua_messages(lua.get(frame, []))
        diffs += compare_frame(frame, got, want)
        compared += len(want)
    assert not diffs, f"{len(diffs)} differences:\n" + "\n".join(diffs[:15])
    assert compared >= 20


@pytest.mark.parametrize("codec", ["range_coder", "fastlz"])
def test_compressed_capture_decoded_in_lua_matches_python(codec: str) -> None:
    """The range coder and FastLZ ported to Lua: with the codec preference set, the datagrams of the
    hosts using that codec decode to the same ENet commands, errors and multiplayer messages as
    ``read_pcap(enet_compression=codec)``; the other hosts' datagrams fail the same way."""
    path = pcap_of("godot3-enet-compressed")
    rows = enet_rows(path, "-o", f"enet.compression:{codec}")
    decoded = 0
    for frame, data in udp_payloads(path):
        want = python_row(data, codec)
        if not any(rows[frame]):  # not taken as ENet: only before the conversation looked like ENet once
            assert not looks_like_enet(data, codec), frame
            continue
        if want[1] or not want[-1]:
            decoded += parse_datagram(data).compressed
        assert rows[frame] == want, frame
    assert decoded >= 10
    lua = mp_frames(TL.tshark(path, "-T", "json", "-J", "frame godot_mp enet", "-o", f"enet.compression:{codec}"))
    py: dict[int, list[dict[str, Any]]] = {}
    for r in read_pcap(str(path), enet_compression=codec):
        if r.kind != "enet" and r.command != "ENET":
            py.setdefault(r.frame, []).append({
                "kind": r.kind, "command": r.command, "node": r.node, "method": r.method,
                "method_id": r.method_id, "peer": r.peer if r.kind in ("peer", "sys") else None,
                "args": _args(r), "dialect": r.dialect,
                "error": r.error})
    diffs = [d for f in sorted(py) for d in compare_frame(f, lua_messages(lua.get(f, [])), py[f])]
    assert not diffs, "\n".join(diffs[:10])
    assert sum(map(len, py.values())) >= 40


def test_compressed_datagrams_are_shown_as_compressed(tshark_frames: dict) -> None:
    name = "godot3-enet-compressed"
    out = TL.tshark(pcap_of(name), "-T", "fields", "-e", "frame.number", "-e", "enet.compressed_body")
    shown = {int(line.split("\t")[0]) for line in out.splitlines() if line.split("\t")[1]}
    undecoded = {r.frame for r in read_pcap(str(pcap_of(name))) if r.command == "ENET" and r.kind == "compressed"}
    assert undecoded and undecoded <= shown


def test_verbose_text_has_no_lua_error_and_shows_the_calls() -> None:
    for name in MP_NAMES:
        TL.tshark(pcap_of(name), "-V")  # asserts no "Lua Error"
    text = TL.tshark(pcap_of("godot3-enet-multiplayer"), "-V", "-Y", 'godot_mp.rpc.method == "chat"')
    assert "Method: chat" in text and 'String: "hello from a"' in text and "Node: Main" in text


# -- ENet against parse_datagram ----------------------------------------------------------------------

def udp_payloads(path: Path) -> list[tuple[int, bytes]]:
    out = subprocess.run(["tshark", "-n", "-r", str(path), "-Y", "udp", "-T", "fields", "-e", "frame.number",
                          "-e", "udp.payload"], capture_output=True, text=True, check=True).stdout
    return [(int(n), bytes.fromhex(h)) for n, h in (line.split("\t") for line in out.splitlines()) if h]


ENET_FIELDS = ("frame.number", "enet.peer_id", "enet.command", "enet.channel", "enet.reliable_seq",
               "enet.data_length", "enet.connect.channel_count", "enet.fragment.fragment_number", "enet.error")


def enet_rows(path: Path, *args: str) -> dict[int, list[str]]:
    fields = [x for f in ENET_FIELDS for x in ("-e", f)]
    out = TL.tshark(path, "-T", "fields", *fields, "-E", "occurrence=a", "-E", "aggregator=|", *args)
    return {int(cols[0]): cols[1:] for cols in (line.split("\t") for line in out.splitlines())}


def python_row(data: bytes, compression: str | None = None) -> list[str]:
    dg = parse_datagram(data, compression)
    cmds = dg.commands

    def join(values: list[Any]) -> str:
        return "|".join(str(v) for v in values)

    return [
        "" if len(data) < 2 else str(dg.peer_id),
        join([c.number for c in cmds]),
        join([c.channel for c in cmds]),
        join([c.reliable_seq for c in cmds]),
        join([c.fields["data_length"] for c in cmds if "data_length" in c.fields]),
        join([c.fields["channel_count"] for c in cmds if "channel_count" in c.fields]),
        join([c.fields["fragment_number"] for c in cmds if "fragment_number" in c.fields]),
        "" if dg.error is None else str(dg.error),
    ]


@pytest.mark.parametrize("name", ENET_NAMES)
def test_enet_commands_match_parse_datagram(name: str) -> None:
    rows = enet_rows(pcap_of(name))
    payloads = udp_payloads(pcap_of(name))
    assert payloads
    for frame, data in payloads:
        if parse_datagram(data).compressed:
            continue
        assert rows[frame] == python_row(data), frame


def test_mutated_datagrams_give_the_python_errors(tmp_path: Path) -> None:
    """Truncated and byte-flipped copies of real datagrams: the same error offset and reason as the
    Python parser, expert info, and no Lua error."""
    rng = random.Random(6)
    real = [d for _, d in udp_payloads(pcap_of("godot3-enet-multiplayer"))]
    real += [d for _, d in udp_payloads(pcap_of("godot4-enet-multiplayer-assembled"))]
    cases: list[bytes] = []
    for d in real[:80]:
        # (no empty payload: UDP hands none to a dissector)
        cases += [d[:n] for n in {1, 2, 3, 5, 9, len(d) // 2, len(d) - 1} if 0 < n < len(d)]
        for _ in range(3):
            b = bytearray(d)
            b[rng.randrange(len(b))] = rng.randrange(256)
            cases.append(bytes(b))
    cases += [b"\x80\x00\x00\x01\x8d\xff\x00\x01" + bytes(40),  # unknown command 13
              b"\x00\x00\x86\x01\x00\x01\xff\xff"]  # SEND_RELIABLE claiming 65535 bytes, ACK without sent time
    pcap = tmp_path / "mutants.pcap"
    w = _PcapWriter(str(pcap))
    for data in cases:
        w.udp("127.0.0.1", 40001, "127.0.0.1", 40002, data)
    w.close()
    rows = enet_rows(pcap, "-o", "enet.udp_ports:40002")
    errors = 0
    for i, data in enumerate(cases, start=1):
        want = python_row(data)
        assert rows[i] == want, (i, data.hex())
        errors += bool(want[-1])
    assert errors > 100
    experts = TL.tshark(pcap, "-o", "enet.udp_ports:40002", "-T", "fields", "-e", "_ws.expert.message")
    assert sum("offset" in line for line in experts.splitlines()) >= errors


# -- generated from the spec ------------------------------------------------------------------------------

def test_lua_5_2_syntax_of_the_templates() -> None:
    luac = shutil.which("luac5.2")
    if luac is None:
        pytest.skip("luac5.2 not installed")
    r = subprocess.run([luac, "-p", str(LUA)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_fields_and_heuristics_are_registered(tmp_path: Path) -> None:
    # -G reads plugins, not -X scripts: install the file as a personal plugin in a scratch HOME
    plugins = tmp_path / ".local" / "lib" / "wireshark" / "plugins"
    plugins.mkdir(parents=True)
    shutil.copy(LUA, plugins / "godot.lua")
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    fields = subprocess.run(["tshark", "-G", "fields"], capture_output=True, text=True, env=env).stdout
    for name in ("enet.peer_id", "enet.session_id", "enet.compressed", "enet.sent_time", "enet.command",
                 "enet.ack_requested", "enet.unsequenced", "enet.channel", "enet.reliable_seq",
                 "enet.connect.channel_count", "enet.fragment.start_seq", "enet.data_length",
                 "godot_mp.command", "godot_mp.rpc.node", "godot_mp.rpc.node_id", "godot_mp.rpc.method",
                 "godot_mp.rpc.method_id", "godot_mp.rset.property", "godot_mp.peer"):
        assert f"\t{name}\t" in fields, name
    heur = subprocess.run(["tshark", "-G", "heuristic-decodes"], capture_output=True, text=True,
                          env=env).stdout.splitlines()
    assert "udp\tenet\tT" in heur and "ws\tgodot_mp\tT" in heur


def test_a_command_added_to_the_enet_spec_is_dissected_with_no_other_edit(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from godot_dissect.spec import enet as E

    made_up = E.CommandDef(13, "MADE_UP", (E.enet_field("made_up_value", "I", "madeUpValue", "a made-up field"),),
                           "a command ENet does not have", sent_flags=(0x80,))
    datagram = struct.pack(">HHBBHI", 0x8000, 0x1234, 0x80 | 13, 0xFF, 1, 0xDEADBEEF)
    pcap = tmp_path / "made_up.pcap"
    w = _PcapWriter(str(pcap))
    w.udp("127.0.0.1", 40001, "127.0.0.1", 40002, datagram)
    w.close()
    args = ("-o", "enet.udp_ports:40002", "-T", "fields", "-e", "enet.command", "-e", "enet.error")
    before = TL.tshark(pcap, *args).strip()
    assert "unknown command number 13" in before

    monkeypatch.setattr(E, "COMMANDS", E.COMMANDS + (made_up,))
    script = tmp_path / "godot.lua"
    script.write_text(generate())
    after = TL.tshark(pcap, *args, "-e", "enet.made_up.made_up_value", script=script).strip().split("\t")
    assert after == ["13", "", str(0xDEADBEEF)]


@pytest.mark.parametrize("name", ["godot3-enet-multiplayer", "godot4-enet-multiplayer-assembled",
                                  "godot4-websocket-multiplayer"])
def test_a_second_pass_shows_the_same_messages(name: str, tshark_frames: dict) -> None:
    """Reassembly, path caches and relays are kept by frame: tshark -2 (what the GUI does when it
    re-dissects a packet) gives the same multiplayer messages as the single pass."""
    two = mp_frames(TL.tshark(pcap_of(name), "-2", "-T", "json", "-J", "frame godot_mp enet"))
    one = tshark_frames[name]
    assert {f: lua_messages(v) for f, v in two.items()} == {f: lua_messages(v) for f, v in one.items()}


# -- Godot 4 method names from the preference, checked against the announced md5 -------------------------

def golden_rpc_names(name: str, default_node: str) -> dict[str, dict[str, list[str]]]:
    """{node: {"script": [...], "node": [...]}} from what the engines printed (the golden)."""
    out: dict[str, dict[str, set[str]]] = {}
    for line in (CAPTURES / f"{name}.golden.jsonl").read_text().splitlines():
        g = json.loads(line)
        if g.get("method") is None or g.get("method_id") is None:
            continue
        t = out.setdefault(g.get("node_path") or default_node, {"script": set(), "node": set()})
        t["node" if g["method_id"] & 0x8000 else "script"].add(g["method"])
    return {k: {"script": sorted(v["script"]), "node": sorted(v["node"])} for k, v in out.items()}


def pref_of(names: dict[str, dict[str, list[str]]]) -> str:
    return ";".join(f"{node}=" + ",".join([*t["script"], *(f"node:{n}" for n in t["node"])])
                    for node, t in names.items())


@pytest.mark.parametrize(("name", "default_node"), [("godot4-websocket-multiplayer", "Main"),
                                                    ("godot4-enet-multiplayer-assembled", "Game")])
def test_rpc_names_from_the_preference_are_checked_against_the_md5(name: str, default_node: str) -> None:
    names = golden_rpc_names(name, default_node)
    lua = mp_frames(TL.tshark(pcap_of(name), "-T", "json", "-J", "frame godot_mp enet",
                                   "-o", f"godot_mp.rpc_names:{pref_of(names)}"))
    py = python_messages(pcap_of(name), rpc_names=names)
    diffs = [d for f in sorted(py) for d in compare_frame(f, lua_messages(lua.get(f, [])), py[f])]
    assert not diffs, "\n".join(diffs[:10])
    resolved = [m["method"] for ms in py.values() for m in ms if m["kind"] == "rpc" and m["method"]]
    assert len(resolved) >= 10
    # one name too many: the md5 differs, so no name is shown (and Python agrees)
    wrong = {k: {"script": [*v["script"], "zzz_not_rpc"], "node": v["node"]} for k, v in names.items()}
    out = TL.tshark(pcap_of(name), "-T", "fields", "-e", "godot_mp.rpc.method",
                    "-o", f"godot_mp.rpc_names:{pref_of(wrong)}")
    assert not out.strip()
    assert not any(m["method"] for ms in python_messages(pcap_of(name), rpc_names=wrong).values() for m in ms
                   if m["kind"] == "rpc")


# -- malformed multiplayer packets ---------------------------------------------------------------------------

def _mutated_session(path: Path, major: int, channel: int, rng: random.Random) -> list[bytes]:
    """Datagrams of one client -> server ENet session: the handshake, then every Godot packet of a real
    capture, truncated or with a byte changed, each in its own SEND_RELIABLE."""
    from godot_dissect.enet import build as B

    payloads = []
    for _, data in udp_payloads(path):
        dg = parse_datagram(data)
        payloads += [c.data for c in dg.commands if c.data and c.channel == channel]
    count = {3: 3, 4: 255}[major]
    out = [B.build_datagram(0xFFF, [B.connect(0, 7, 1234567, count)], sent_time=1)]
    seq = 1
    for p in payloads[:60]:
        variants = [p, p[:len(p) // 2], p[:-1], p[:9]]
        b = bytearray(p)
        b[rng.randrange(len(b))] = rng.randrange(256)
        variants.append(bytes(b))
        for v in variants:
            if v:
                seq += 1
                out.append(B.build_datagram(0, [B.send_reliable(channel, seq, v)], sent_time=seq))
    return out


def test_mutated_multiplayer_packets_match_the_python_reader(tmp_path: Path) -> None:
    """Real Godot 3 and 4 packets cut short or with a byte changed, in a fresh ENet session: tshark shows
    the same messages and errors as read_pcap, with expert info and no Lua error."""
    rng = random.Random(66)
    pcap = tmp_path / "mp_mutants.pcap"
    w = _PcapWriter(str(pcap))
    for port, (name, major, channel) in enumerate([("godot3-enet-multiplayer", 3, 1),
                                                   ("godot4-enet-multiplayer-assembled", 4, 0)]):
        for data in _mutated_session(pcap_of(name), major, channel, rng):
            w.udp("127.0.0.1", 41000 + port, "127.0.0.1", 42000 + port, data)
    w.close()
    lua = mp_frames(TL.tshark(pcap, "-T", "json", "-J", "frame godot_mp enet"))
    py = python_messages(pcap)
    diffs = [d for f in sorted(set(py) | set(lua)) for d in compare_frame(f, lua_messages(lua.get(f, [])),
                                                                        py.get(f, []))]
    assert not diffs, f"{len(diffs)} differences:\n" + "\n".join(diffs[:15])
    errors = sum(m["kind"] == "error" for ms in py.values() for m in ms)
    assert errors >= 50


def test_a_multiplayer_command_added_to_the_spec_is_dissected_with_no_other_edit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The layout walker is generic: a made-up Godot 3 command with its own fields reaches tshark,
    fields and all, by regenerating the file."""
    import dataclasses
    from types import MappingProxyType

    from godot_dissect.enet import build as B
    from godot_dissect.spec import multiplayer as M

    made_up = M.Command(5, "MADE_UP", "raw", forms=(M.Form("made_up", (
        M.Int("made_up_id", "<I", "a made-up id"), M.Text("made_up_text", "a made-up text")), min_size=6),))
    pcap = tmp_path / "made_up_mp.pcap"
    w = _PcapWriter(str(pcap))
    w.udp("127.0.0.1", 40001, "127.0.0.1", 40002, B.build_datagram(0xFFF, [B.connect(0, 7, 1234567, 3)], sent_time=1))
    packet = struct.pack("<Ii", 1234567, 1) + bytes([5]) + struct.pack("<I", 7) + b"hi\0"
    w.udp("127.0.0.1", 40001, "127.0.0.1", 40002, B.build_datagram(0, [B.send_reliable(1, 2, packet)], sent_time=2))
    w.close()
    args = ("-T", "fields", "-e", "godot_mp.command", "-e", "godot_mp.error")
    assert "unknown command 5" in TL.tshark(pcap, *args)

    monkeypatch.setattr(M, "PROTOCOLS", MappingProxyType(
        {3: dataclasses.replace(M.GODOT3, commands=M.GODOT3.commands + (made_up,)), 4: M.GODOT4}))
    script = tmp_path / "godot.lua"
    script.write_text(generate())
    rows = TL.tshark(pcap, *args, "-e", "godot_mp.made_up_id", "-e", "godot_mp.made_up_text", script=script)
    assert rows.splitlines()[-1].split("\t") == ["MADE_UP", "", "7", "hi"]



def test_the_packet_list_keeps_a_bounded_number_of_readings(tmp_path: Path) -> None:
    """Without a tree (the packet list) the multiplayer layer keeps what it read of a packet by the packet's
    bytes, so a packet sent again is not read again; it keeps at most DECODED_KEEP of them. 16,000 Godot 3 RAW
    packets that are all different take tshark's peak memory less than 12 MB over what 4,000 take (+3 MB here;
    the same readings kept without a bound: +35 MB), and the Info column is the same for a packet read afresh
    and for one whose reading was kept. (Peak RSS, not the Lua heap: a Lua tap to read the heap with makes
    tshark build the tree, and then nothing is kept.)"""
    import os

    from godot_dissect.enet import build
    from godot_dissect.fuzz import hostile
    from godot_dissect.fuzz.pcapout import PcapWriter
    from godot_dissect.spec import enet as enet_spec

    def capture(path: Path, n: int, distinct: bool) -> None:
        w = PcapWriter(path)
        client, server = ("10.0.0.1", 40000), ("10.0.0.2", hostile.ENET_PORT)
        # CONNECT with 2 channels: a Godot 3 peer; channel 1 then carries peer header + MultiplayerAPI packet
        w.udp(0, client, server, build.build_datagram(enet_spec.UNASSIGNED_PEER_ID, [build.connect(0, 0x1234, 0, 2)],
                                                      sent_time=1))
        for i in range(1, n + 1):
            raw = struct.pack("<Q", i if distinct else 7) * 4  # send_bytes() data: new bytes, or the same
            data = struct.pack("<Ii", 1234, 1) + bytes([4]) + raw  # src, dst, NETWORK_COMMAND_RAW
            w.udp(i * 1e-4, client, server,
                  build.build_datagram(0, [build.send_reliable(1, i & 0xFFFF, data)], sent_time=i & 0xFFFF))
        w.close()

    peak, infos = {}, {}
    for n, distinct in ((4_000, True), (16_000, True), (50, False)):
        path = tmp_path / f"raw-{n}.pcap"
        capture(path, n, distinct)
        errors = tmp_path / f"raw-{n}.stderr"
        with errors.open("w") as ef:  # (waited for with wait4: its own peak RSS)
            proc = subprocess.Popen(["tshark", "-n", "-X", f"lua_script:{LUA}", "-o",
                                     f"enet.udp_ports:{hostile.ENET_PORT}", "-r", str(path)],
                                    stdout=subprocess.PIPE, stderr=ef, text=True)
            assert proc.stdout is not None
            out = proc.stdout.read()
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
        err = errors.read_text()
        assert proc.returncode == 0 and "Lua" not in err, err[-2000:]
        peak[n] = usage.ru_maxrss
        infos[n] = [line.split("GodotMP", 1)[-1].split(None, 1)[-1] for line in out.splitlines()[1:]]
    assert peak[16_000] - peak[4_000] < 12 * 1024, peak  # (KB)
    # the repeated packet: read once, then kept; every frame's Info is the RAW summary
    assert infos[50] == ["RAW 32 bytes"] * 50, infos[50][:3]
    assert infos[4_000] == ["RAW 32 bytes"] * 4_000
