"""``godot-dissect stats`` / ``godot_dissect.stats.profile`` against what real engines printed and what
tshark counts.

Ground truth: captures/godot3-enet-profile.golden.jsonl (every call the three Godot 3.2.3 processes
made and executed, printed by the engines), captures/godot4-websocket-multiplayer.golden.jsonl (the
Godot 4.6 client's prints), tshark's frame lengths and conversations, and ENet datagrams walked by
the capture driver's own parser (tools/captures/make_multiplayer_captures.enet_walk, no godot_dissect
decoder).
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import struct
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import dpkt
import pytest

from godot_dissect.stats import TABLES, profile

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = ROOT / "captures"
PROFILE = CAPTURES / "profile" / "godot3-enet-profile.pcapng"
WS4 = CAPTURES / "godot4-websocket-multiplayer.pcapng"
TSHARK = shutil.which("tshark")
needs_tshark = pytest.mark.skipif(TSHARK is None, reason="tshark not installed")


def golden(name: str) -> list[dict]:
    """A golden's lines; the profile capture's live in captures/profile/ (engine call prints, not
    one line per packet like the captures/ goldens other tests iterate over)."""
    where = CAPTURES / "profile" if name == "godot3-enet-profile" else CAPTURES
    return [json.loads(ln) for ln in (where / f"{name}.golden.jsonl").read_text(encoding="utf-8").splitlines()]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "godot_dissect", "stats", *args], capture_output=True, cwd=ROOT,
                          timeout=120, text=True)


@pytest.fixture(scope="module")
def prof():
    return profile(str(PROFILE), series=True)


# -- the rpc table against the engines' prints -------------------------------------------------------


def test_rpc_counts_equal_the_engines_executions(prof):
    execs = Counter((r["sender"], r["peer_id"], r["node"], r["kind"], r["method"])
                    for r in golden("godot3-enet-profile") if r["event"] == "exec" and not r["local"])
    got: Counter = Counter()
    for r in prof.rpc.itertuples():
        if r.count:
            got[(r.sender, r.receiver, r.node, r.kind, r.name)] += r.count
    assert got == execs
    assert sum(execs.values()) > 50


def test_relayed_calls_count_once_per_final_receiver(prof):
    g = golden("godot3-enet-profile")
    # calls a client addressed to the other client: relayed by the server, executed once by the target
    made = Counter((r["peer_id"], r["target"], r["node"], r["method"]) for r in g
                   if r["event"] == "call" and r["role"] != "s" and r["target"] not in (0, 1) and r["target"] > 0)
    assert made, "the plan has client-to-client calls"
    rows = prof.rpc
    for (sender, target, node, method), n in made.items():
        sel = rows[(rows.sender == sender) & (rows.receiver == target) & (rows.node == node) & (rows.name == method)]
        assert sel["count"].sum() == n, (sender, target, node, method)
        assert sel["relayed"].all()
        # both legs (client -> server -> client) are on the wire: more wire bytes than one leg's app bytes x 2
        assert (sel["wire_bytes"] > 2 * sel["app_bytes"]).all()


def test_rpc_transfer_is_what_the_caller_asked_for(prof):
    calls = {(r["peer_id"], r["node"], r["method"]): r["reliable"] for r in golden("godot3-enet-profile")
             if r["event"] == "call" and r["args_var2bytes_size"] < 1000}  # big calls go as reliable fragments
    for r in prof.rpc.itertuples():
        if (r.sender, r.node, r.name) in calls:
            assert r.transfer == ("reliable" if calls[(r.sender, r.node, r.name)] else "unreliable"), r


def test_rpc_app_bytes_hold_the_engines_argument_bytes(prof):
    # Godot 3.2.3 REMOTE_CALL/REMOTE_SET: command byte, u32 target, method name + NUL, (rpc) argument
    # count byte, each argument as var2bytes writes it (= var2bytes(args) minus the Array's 8-byte
    # header), and on a node's first call to a peer its path + NUL after the arguments.
    sizes = {(r["peer_id"], r["node"], r["method"]): r["args_var2bytes_size"] - 8 for r in golden("godot3-enet-profile")
             if r["event"] == "call"}
    checked = 0
    for r in prof.rpc.itertuples():
        if not r.count:
            continue
        base = r.count * (1 + 4 + len(r.name) + 1 + (r.kind == "rpc") + sizes[(r.sender, r.node, r.name)])
        assert r.app_bytes - base in (0, len(r.node) + 1), r
        checked += 1
    assert checked >= 10


def test_godot4_websocket_rpc_counts_equal_the_client_prints():
    g = golden("godot4-websocket-multiplayer")
    client = next(r["peer_id"] for r in g if r["command"] == "PEER_ID")
    names = next(r["rpc_methods"] for r in g if r["command"] == "SIMPLIFY_PATH" and "rpc_methods" in r)
    expected: Counter = Counter()
    for r in g:
        if r["command"] == "REMOTE_CALL":
            c2s = r["flow"].endswith(":4261")
            expected[(client, 1) if c2s else (1, client), r["method"]] += 1
    p = profile(str(WS4), rpc_names={"Main": names})
    got: Counter = Counter()
    for r in p.rpc.itertuples():
        if r.count:
            got[(r.sender, r.receiver), r.name] += r.count
    assert got == expected
    # the client's SYS RELAY of a call: on its way to its final receiver, which this capture never shows
    relay = next(r for r in g if r.get("sys") == "RELAY" and r.get("inner_command") == "REMOTE_CALL")
    rows = p.rpc[p.rpc.relayed.astype(bool)]
    assert list(rows.name) == [relay["method"]] and list(rows["count"]) == [0] and rows.sender.iloc[0] == client


# -- wire bytes against tshark ------------------------------------------------------------------------


def tshark_rows(pcap: Path, fields: list[str], display: str) -> list[list[str]]:
    out = subprocess.run([TSHARK, "-r", str(pcap), "-T", "fields", *sum((["-e", f] for f in fields), []),
                          "-Y", display], capture_output=True, text=True, check=True, timeout=120).stdout
    return [ln.split("\t") for ln in out.splitlines()]


def tshark_conv_frames(pcap: Path, proto: str) -> dict[tuple[str, str], int]:
    """Frames per direction from ``tshark -q -z conv,PROTO`` (the frame counts; its byte columns use
    human units, so the bytes are summed from tshark's frame.len instead)."""
    out = subprocess.run([TSHARK, "-r", str(pcap), "-q", "-z", f"conv,{proto}"], capture_output=True, text=True,
                         check=True, timeout=120).stdout
    frames = {}
    for ln in out.splitlines():
        parts = ln.split()
        if len(parts) > 4 and parts[1] == "<->":
            a, b = parts[0], parts[2]
            frames[(b, a)] = int(parts[3])  # "<-" column: B to A
            frames[(a, b)] = int(parts[6])  # "->" column: A to B (after "<-" frames, bytes, unit)
    return frames


@needs_tshark
@pytest.mark.parametrize("name,proto", [("profile/godot3-enet-profile", "udp"), ("godot3-enet-multiplayer", "udp"),
                                        ("godot4-websocket-multiplayer", "tcp"), ("godot3-tcp-stream", "tcp"),
                                        ("godot3-udp-all-types", "udp")])
def test_bandwidth_wire_bytes_equal_tshark_frame_bytes(name, proto):
    pcap = CAPTURES / f"{name}.pcapng"
    want: Counter = Counter()
    for src, sport, dst, dport, flen in tshark_rows(pcap, ["ip.src", f"{proto}.srcport", "ip.dst", f"{proto}.dstport",
                                                           "frame.len"], proto):
        want[(f"{src}:{sport}", f"{dst}:{dport}")] += int(flen)
    bw = profile(str(pcap)).bandwidth
    got = {(r.src, r.dst): r.wire_bytes for r in bw.itertuples()}
    assert got == dict(want)
    frames = tshark_conv_frames(pcap, proto)
    assert {(r.src, r.dst): r.frames for r in bw.itertuples()} == frames


@needs_tshark
@pytest.mark.parametrize("name", ["profile/godot3-enet-profile", "godot3-enet-multiplayer"])
def test_message_wire_bytes_plus_listed_control_frames_equal_tshark(name):
    """Per direction: the records' wire_bytes plus the frames that carry no message (ENet datagrams
    without a data command, walked by the capture driver's parser) = tshark's frame bytes."""
    sys.path.insert(0, str(ROOT / "tools" / "captures"))
    from make_multiplayer_captures import enet_walk

    pcap = CAPTURES / f"{name}.pcapng"
    total: Counter = Counter()
    control: Counter = Counter()
    fields = ["frame.number", "ip.src", "udp.srcport", "ip.dst", "udp.dstport", "frame.len", "udp.payload"]
    for fn, src, sport, dst, dport, flen, payload in tshark_rows(pcap, fields, "udp"):
        key = (f"{src}:{sport}", f"{dst}:{dport}")
        total[key] += int(flen)
        _, commands = enet_walk(bytes.fromhex(payload), f"frame {fn}")
        if not any("_data" in c for c in commands):
            control[key] += int(flen)
    bw = profile(str(pcap), by="channel").bandwidth
    messages: defaultdict = defaultdict(float)
    no_message = {}
    for r in bw.itertuples():
        if r.channel == "(no message)":
            no_message[(r.src, r.dst)] = r.wire_bytes
        else:
            messages[(r.src, r.dst)] += r.wire_bytes
    for key, n in total.items():
        assert messages[key] + control[key] == pytest.approx(n, abs=0.01), key
        assert no_message[key] == pytest.approx(control[key], abs=0.01), key


# -- other tables ---------------------------------------------------------------------------------------


def test_enet_table_counts_fragments_and_round_trips(prof):
    g = golden("godot3-enet-profile")
    blob = next(r for r in g if r["event"] == "call" and r["method"] == "blob")
    enet = prof.enet
    frag_rows = enet[enet.fragments > 0]
    assert frag_rows.reassembled.sum() == 1  # the one call larger than the MTU
    assert frag_rows.fragments.sum() >= blob["args_var2bytes_size"] // 1400 + 1
    assert (enet.retransmissions == 0).all()  # loopback loses nothing
    timed = enet[enet.rtt_samples > 0]
    assert len(timed) and (timed.rtt_min_ms >= 0).all() and (timed.rtt_min_ms <= timed.rtt_max_ms).all()
    # both clients closed the connection: one DISCONNECT from each
    assert enet.disconnects.sum() >= 2


@needs_tshark
def test_conversations_match_tshark(prof):
    conv = prof.conversations
    frames = tshark_conv_frames(PROFILE, "udp")
    assert len(conv) == len(frames) // 2
    for r in conv.itertuples():
        assert frames[(r.a, r.b)] == r.frames_a_to_b and frames[(r.b, r.a)] == r.frames_b_to_a
        assert r.godot == "multiplayer" and r.dialect == "godot3"


def test_plot_png_size_and_series(prof, tmp_path):
    from godot_dissect.stats.plot import bandwidth_png

    out = tmp_path / "bw.png"
    fig = bandwidth_png(prof, out, width=900, height=700)
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    assert struct.unpack(">II", data[16:24]) == (900, 700)
    axes = fig.get_axes()
    assert len(axes) == 4  # two client conversations, two directions each
    g = golden("godot3-enet-profile")
    for ax in axes:
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        assert len(ax.collections) == len(labels) and labels[-1] == "(no message)"
        assert ax.get_ylabel() == "wire bytes/s"
    # every node the engines called shows as a series somewhere
    shown = {t.get_text() for ax in axes for t in ax.get_legend().get_texts()}
    assert {r["node"] for r in g if r["event"] == "call"} <= shown


def test_cli_plot_by_method(tmp_path):
    out = tmp_path / "m.png"
    r = run(str(PROFILE), "--plot", str(out), "--plot-size", "640x480", "--by", "method", "-f", "csv", "-t", "rpc")
    assert r.returncode == 0, r.stderr
    assert struct.unpack(">II", out.read_bytes()[16:24]) == (640, 480)


# -- output formats and errors ----------------------------------------------------------------------------


def test_cli_csv_and_json_use_plain_numbers(prof):
    r = run(str(PROFILE), "-f", "csv", "-t", "bandwidth")
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert {float(x["wire_bytes"]) for x in rows} == set(prof.bandwidth.wire_bytes.astype(float))
    r = run(str(PROFILE), "-f", "json", "-t", "rpc", "-t", "expert")
    data = json.loads(r.stdout)
    assert set(data) == {"rpc", "expert"}
    assert sum(x["count"] for x in data["rpc"]["rows"]) == prof.rpc["count"].sum()
    assert data["rpc"]["columns"] == list(prof.rpc.columns)


def test_cli_default_tables_human_units():
    r = run(str(PROFILE))
    assert r.returncode == 0, r.stderr
    assert "rpc" in r.stdout and "bandwidth" in r.stdout and " kB" in r.stdout


def test_unknown_table_lists_the_valid_names():
    r = run(str(PROFILE), "--table", "nope")
    assert r.returncode == 2
    assert "unknown table 'nope'" in r.stderr and all(t in r.stderr for t in TABLES)


def _write_pcap(path: Path, frames: list[tuple[float, bytes]]) -> None:
    with path.open("wb") as f:
        w = dpkt.pcap.Writer(f, linktype=dpkt.pcap.DLT_EN10MB)
        for ts, buf in frames:
            w.writepkt(buf, ts)


def test_empty_and_non_godot_captures_give_empty_tables(tmp_path):
    empty = tmp_path / "empty.pcap"
    _write_pcap(empty, [])
    r = run(str(empty), "-t", "rpc", "-t", "conversations")
    assert r.returncode == 0, r.stderr
    assert "no multiplayer RPC" in r.stdout and "no UDP/TCP packet" in r.stdout
    # a TCP handshake between two hosts: a conversation, but no Godot message
    syn = dpkt.ethernet.Ethernet(src=b"\x02" * 6, dst=b"\x04" * 6, type=dpkt.ethernet.ETH_TYPE_IP,
                                 data=dpkt.ip.IP(src=bytes([10, 0, 0, 1]), dst=bytes([10, 0, 0, 2]), p=6,
                                                 data=dpkt.tcp.TCP(sport=5000, dport=80, flags=dpkt.tcp.TH_SYN)))
    other = tmp_path / "other.pcap"
    _write_pcap(other, [(1.0, bytes(syn))])
    r = run(str(other), "-f", "json", "-t", "rpc", "-t", "bandwidth", "-t", "conversations")
    data = json.loads(r.stdout)
    assert r.returncode == 0 and data["rpc"]["rows"] == [] and data["bandwidth"]["rows"] == []
    assert data["rpc"]["note"] == "no multiplayer RPC or rset in this capture"
    assert data["conversations"]["rows"][0]["frames"] == 1 and data["conversations"]["rows"][0]["godot"] == ""


def test_cut_datagrams_are_counted_as_malformed(tmp_path):
    """Unreliable ENet datagrams cut short: the tables still come, and each cut one is in expert."""
    sys.path.insert(0, str(ROOT / "tools" / "captures"))
    from make_multiplayer_captures import enet_walk

    frames = []
    cut = 0
    with PROFILE.open("rb") as f:
        for ts, buf in dpkt.pcapng.Reader(f):
            eth = dpkt.ethernet.Ethernet(buf)
            udp = eth.data.data
            _, commands = enet_walk(bytes(udp.data), "frame")
            if [c["command"] for c in commands] == ["SEND_UNSEQUENCED"] and cut < 5:
                udp.data = bytes(udp.data)[:-3]  # the command's data runs past the datagram
                udp.ulen, udp.sum = 8 + len(udp.data), 0
                eth.data.len, eth.data.sum = 20 + udp.ulen, 0
                cut += 1
            frames.append((ts, bytes(eth)))
    bad = tmp_path / "cut.pcap"
    _write_pcap(bad, frames)
    assert cut == 5
    p = profile(str(bad))
    malformed = p.expert[p.expert.category == "malformed"]
    assert malformed["count"].sum() == cut
    assert malformed.offset.notna().all() and malformed.detail.str.len().gt(0).all()
    assert p.rpc["count"].sum() > 0


def test_stdin_gives_the_same_tables():
    cmd = [sys.executable, "-m", "godot_dissect", "stats", "-", "-f", "csv", "-t", "rpc", "-t", "enet"]
    piped = subprocess.run(cmd, input=PROFILE.read_bytes(), capture_output=True, cwd=ROOT, timeout=120)
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout.decode() == run(str(PROFILE), "-f", "csv", "-t", "rpc", "-t", "enet").stdout


def test_tables_not_asked_for_are_not_kept():
    p = profile(str(PROFILE), tables=("rpc",))
    assert p.rpc["count"].sum() == profile(str(PROFILE)).rpc["count"].sum()
    with pytest.raises(KeyError, match="enet"):
        p.table("enet")
    with pytest.raises(KeyError, match="the tables are"):
        profile(str(PROFILE), tables=("nope",))


def test_a_flood_of_flows_folds_into_other_rows(tmp_path):
    """Distinct conversations beyond the row limit share one "(other)" row and say so in expert;
    frames and bytes are all still counted."""
    frames = []
    for i in range(60):
        ip = dpkt.ip.IP(src=bytes([10, 1, 0, i]), dst=bytes([10, 2, 0, 1]), p=17,
                        data=dpkt.udp.UDP(sport=40000 + i, dport=9, data=b"\xff" * 3))
        ip.len = 20 + 8 + 3
        ip.data.ulen = 11
        frames.append((1.0 + i / 100, bytes(dpkt.ethernet.Ethernet(src=b"\x02" * 6, dst=b"\x04" * 6,
                                                                    type=dpkt.ethernet.ETH_TYPE_IP, data=ip))))
    path = tmp_path / "flood.pcap"
    _write_pcap(path, frames)
    p = profile(str(path), max_rows=10)
    conv = p.conversations
    assert len(conv) == 11 and conv.frames.sum() == 60 and conv.bytes.sum() == sum(len(b) for _, b in frames)
    assert (conv.a == "(other):0").sum() == 1
    limit = p.expert[p.expert.category == "limit"]
    assert limit["count"].sum() == 50


@pytest.mark.parametrize("name,server_port", [("godot3-enet-multiplayer", 4270),
                                              ("godot3-websocket-multiplayer", 4273)])
def test_godot3_records_and_rpc_rows_follow_the_engines_routing(name, server_port):
    """Each golden call line is one hop with the engine-printed sender (get_rpc_sender_id) and the
    process that executed it (receiver_id), relayed legs included: the records say the same, and
    the rpc table counts each call once, at the hop that reaches its receiver."""
    from godot_dissect.pcap.reader import read_pcap

    lines = [r for r in golden(name) if r["command"] in ("REMOTE_CALL", "REMOTE_SET")]
    hops = Counter((r["remote_sender_id"], r["receiver_id"], r["node_path"], r["method"]) for r in lines)
    recs = [r for r in read_pcap(str(CAPTURES / f"{name}.pcapng")) if r.kind in ("rpc", "rset")]
    assert Counter((r.sender, r.receiver, r.node, r.method) for r in recs) == hops
    reached = Counter((r["remote_sender_id"], r["receiver_id"], r["node_path"], r["method"]) for r in lines
                      if r["flow"].endswith(f":{server_port}") == (r["receiver_id"] == 1))
    assert sum(hops.values()) > sum(reached.values())  # some calls took two hops
    got: Counter = Counter()
    for r in profile(str(CAPTURES / f"{name}.pcapng"), tables=("rpc",)).rpc.itertuples():
        if r.count:
            got[(r.sender, r.receiver, r.node, r.name)] += r.count
    assert got == reached


@pytest.mark.parametrize("name", ["godot3-udp-all-types", "godot3-tcp-stream", "godot4-websocket-put-var"])
def test_expert_objects_are_the_ones_the_engine_printed(name):
    """Messages holding an Object sent as an instance id (the engine prints EncodedObjectAsID) and
    full Objects (any other class) are counted in expert, no more and no fewer."""
    texts = [r.get("text") or r.get("text_head", "") for r in golden(name)]
    as_id = sum("Object(EncodedObjectAsID" in t for t in texts)
    full = sum(t.replace("Object(EncodedObjectAsID", "").count("Object(") > 0 for t in texts)
    assert as_id > 0
    e = profile(str(CAPTURES / f"{name}.pcapng"), tables=("expert",)).expert
    assert e[e.category == "object-as-id"]["count"].sum() == as_id
    assert e[e.category == "object"]["count"].sum() == full


def test_sync_table_counts_full_and_delta_syncs_as_the_engine_received_them():
    """godot4-enet-multiplayer-assembled: SceneMultiplayer packets made by Godot 4.6, each printed by
    the receiving engine; per receiver the sync table has every SYNC entry, full and delta apart
    (the editor's profiler drops deltas), and every SPAWN/DESPAWN."""
    name = "godot4-enet-multiplayer-assembled"
    g = golden(name)
    want: Counter = Counter()
    for r in g:
        if r["command"] == "SYNC":
            for e in r["entries"]:
                want[(r["to_peer"], "deltas" if r["delta"] else "syncs")] += 1
                if e["path_cache"]:
                    want[(r["to_peer"], e["synchronizer"], "delta" if r["delta"] else "full")] += 1
        elif r["command"] in ("SPAWN", "DESPAWN"):
            want[(r["to_peer"], r["command"].lower() + "s")] += 1
    assert any(k[1] == "deltas" for k in want) and any(k[1] == "syncs" for k in want)
    got: Counter = Counter()
    for r in profile(str(CAPTURES / f"{name}.pcapng"), tables=("sync",)).sync.itertuples():
        for col in ("syncs", "deltas", "spawns", "despawns"):
            got[(r.receiver, col)] += getattr(r, col)
        if (r.receiver, r.object, "full") in want or (r.receiver, r.object, "delta") in want:
            got[(r.receiver, r.object, "full")] += r.syncs
            got[(r.receiver, r.object, "delta")] += r.deltas
    assert +got == +want


def test_dictionaries_keyed_by_deep_arrays_do_not_recurse(tmp_path):
    """A Dictionary whose key is an Array nested 500/1023 levels (legal for the engine): the variants
    table labels it by type without hashing the key (which recursed past Python's limit)."""
    from godot_dissect.fuzz.hostile import PORT, deep_keys

    path = tmp_path / "deep.pcap"
    deep_keys(6, path)  # 6 Strings, Dictionaries keyed 500, 1023, 1024 (malformed) deep, twice
    r = run(str(path), "-p", str(PORT), "-t", "variants", "-t", "expert", "-f", "json")
    assert r.returncode == 0, r.stderr[-2000:]
    data = json.loads(r.stdout)
    counts = {row["what"]: row["count"] for row in data["variants"]["rows"]}
    assert counts == {"String": 6, "Dictionary": 4}
    assert sum(row["count"] for row in data["expert"]["rows"] if row["category"] == "malformed") == 2


@pytest.mark.parametrize("fmt", ["table", "csv", "json", "markdown"])
def test_a_lone_surrogate_in_a_dictionary_key_is_written_escaped(tmp_path, fmt):
    """A Godot 3 Dictionary keyed by the String whose bytes are the UTF-8 of U+D800 (the engine does
    not check them): every format prints the row, the key as \\ud800 (JSON reads it back as U+D800)."""
    from godot_dissect.fuzz.hostile import PORT, _udp

    key = bytes.fromhex("04000000" "03000000" "eda08000")  # String: the 3 bytes of U+D800, padded
    path = tmp_path / "key.pcap"
    _udp(path, [bytes.fromhex("12000000" "01000000") + key + bytes(4)])  # Dictionary {key: null}
    r = subprocess.run([sys.executable, "-m", "godot_dissect", "stats", "-p", str(PORT), "-t", "variants",
                        "-f", fmt, str(path)], capture_output=True, cwd=ROOT, timeout=120,
                       env={**os.environ, "COLUMNS": "200"})  # the table's rows on one line
    assert r.returncode == 0, r.stderr.decode(errors="replace")[-2000:]
    assert b"Dictionary{\\ud800}" in r.stdout
    if fmt == "json":
        assert json.loads(r.stdout)["variants"]["rows"][0]["what"] == "Dictionary{\ud800}"
