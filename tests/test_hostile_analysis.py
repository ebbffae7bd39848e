"""Hostile input against the analysis paths: ``stats`` tables, the multiplayer session's caches and the
command line's own options.

Each construction is built here with the project's writers (``PcapWriter``, the ENet and Godot 4
packet builders) and run through the real ``godot-dissect`` command (``fuzz.harness`` measures each
run's peak RSS and CPU time in a fresh process): exit 0 or a one-line usage error, no traceback,
and memory or time that does not follow the hostile part of the input (two sizes, as
``tests/test_hostile.py`` does).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from godot_dissect.enet import build as enet
from godot_dissect.enet.sender import EnetSender
from godot_dissect.fuzz import harness, hostile
from godot_dissect.fuzz.pcapout import PcapWriter
from godot_dissect.multiplayer import MultiplayerSession
from godot_dissect.multiplayer import godot4 as g4
from godot_dissect.spec import enet as enet_spec
from godot_dissect.spec.multiplayer import MAX_CACHE_SENDERS
from godot_dissect.spec.stats import ENET_CONVERSATIONS, ENET_HELD_BYTES, MAX_INTERVAL, MIN_INTERVAL
from godot_dissect.stats import profile
from godot_dissect.stats.traffic import Traffic

GODOT4_CHANNELS = next(k for k, v in enet_spec.GODOT_MAJOR_BY_CHANNEL_COUNT.items() if v == 4)
CLIENT, SERVER = ("10.0.0.1", 40000), ("10.0.0.2", hostile.ENET_PORT)


def _cli(*args: str, timeout: float = 300) -> harness.Outcome:
    return harness._run(args[0], [sys.executable, "-m", "godot_dissect", *args], timeout, harness._env())


def _usage_error(o: harness.Outcome) -> None:
    assert o.rc == 2 and o.clean, o.crash


# --- stats ------------------------------------------------------------------------------------------

def _udp_strings(path: Path, n: int = 10) -> None:
    w = PcapWriter(path)
    for i in range(n):
        w.udp(i * 0.5, hostile.CLIENT, hostile.SERVER, hostile.GOOD)
    w.close()


@pytest.mark.parametrize("interval", ["1e-320", "5e-324", "nan", "inf", "-1", "0", "1e308"])
def test_stats_interval_out_of_range_is_a_usage_error(interval: str, tmp_path: Path) -> None:
    """--interval 1e-320 made (time span / interval) infinite: OverflowError from int()."""
    _udp_strings(tmp_path / "s.pcap")
    o = _cli("stats", str(tmp_path / "s.pcap"), "-p", str(hostile.PORT), f"--interval={interval}")
    _usage_error(o)
    with pytest.raises(ValueError, match="interval must be between"):
        Traffic(float(interval))


def test_stats_interval_at_its_limits_reads(tmp_path: Path) -> None:
    _udp_strings(tmp_path / "s.pcap")
    for interval in (MIN_INTERVAL, MAX_INTERVAL):
        p = profile(str(tmp_path / "s.pcap"), interval=interval, ports=(hostile.PORT,), series=True)
        (row,) = p.rows("bandwidth")
        assert row[5:9] == (10, 580, 10, 160)  # frames, wire bytes, messages, app bytes: 10 x (42 + 16)
        assert all(math.isfinite(x) for x in row[9:])


def _non_godot_udp(path: Path, conversations: int, per: int = 1, size: int = 1000) -> None:
    """DNS-like UDP: ``conversations`` client ports, ``per`` datagrams each; no Godot message at all."""
    w = PcapWriter(path)
    for c in range(conversations):
        src = (f"10.{(c >> 16) & 255}.{(c >> 8) & 255}.{c & 255}", 1024 + c % 60000)
        for k in range(per):
            w.udp((c * per + k) * 1e-4, src, ("10.200.0.2", 53), b"\x12\x34" + b"\x01" * (size - 2))
    w.close()


def test_enet_table_holds_a_bounded_number_of_undecided_datagrams(tmp_path: Path) -> None:
    """The enet table held every datagram of every UDP conversation the reader had not called ENet
    (non-Godot traffic never is): 400k 1 KB datagrams -> 604 MB RSS. Now at most ENET_CONVERSATIONS
    conversations and ENET_HELD_BYTES bytes, and the drop is said in the expert table."""
    n = ENET_CONVERSATIONS + 500
    _non_godot_udp(tmp_path / "dns.pcap", n)
    p = profile(str(tmp_path / "dns.pcap"), tables=("enet", "expert"))
    assert p.records == 0 and len(p._enet.state) == ENET_CONVERSATIONS
    assert p._enet.held == 1000 * ENET_CONVERSATIONS <= ENET_HELD_BYTES
    assert p._enet.dropped == 500
    (note,) = [r for r in p.rows("expert") if r[1] == "limit"]
    assert note[4] == 500 and "ENET_CONVERSATIONS" in note[8]
    assert p.rows("enet") == []
    # bytes: few conversations, each under ENET_HELD_DATAGRAMS, together past ENET_HELD_BYTES
    _non_godot_udp(tmp_path / "big.pcap", 200, per=50, size=1400)
    p = profile(str(tmp_path / "big.pcap"), tables=("enet",))
    assert p.records == 0
    assert p._enet.held <= ENET_HELD_BYTES < 200 * 50 * 1400
    assert p._enet.dropped == 200 * 50 - p._enet.held // 1400


def test_enet_table_memory_does_not_follow_non_godot_traffic(tmp_path: Path) -> None:
    small, large = tmp_path / "a.pcap", tmp_path / "b.pcap"
    _non_godot_udp(small, 150, per=64, size=1400)  # 13 MB of datagrams: past ENET_HELD_BYTES
    _non_godot_udp(large, 300, per=64, size=1400)
    a, b = (_cli("stats", str(p), "-t", "enet", "-t", "expert") for p in (small, large))
    assert a.clean and b.clean, (a.crash, b.crash)
    # held whole (before): the larger run peaked ~13 MB higher
    assert b.rss_mb - a.rss_mb < 5, f"{a.rss_mb:.0f} MB -> {b.rss_mb:.0f} MB"


def test_conversations_and_peers_fold_past_max_rows(tmp_path: Path) -> None:
    """Conversations of Godot messages beyond max_rows shared one accumulator each... except the
    per-conversation ``found`` entry, kept for every one (300k conversations: 422 MB)."""
    w = PcapWriter(tmp_path / "c.pcap")
    for i in range(50):
        w.udp(i * 1e-3, (f"10.0.1.{i}", 40000), hostile.SERVER, hostile.GOOD)
    w.close()
    p = profile(str(tmp_path / "c.pcap"), ports=(hostile.PORT,), max_rows=10,
                tables=("conversations", "bandwidth", "expert"))
    assert len(p.traffic.found) <= 11 and len(p.traffic.directions) <= 11
    convs = p.rows("conversations")
    assert sum(r[11] for r in convs) == 50  # every message counted, the last 40 in "(other)"
    other = [r for r in convs if "(other)" in r[1]]
    assert len(other) == 1 and other[0][11] == 40


# --- multiplayer --------------------------------------------------------------------------------------

def _godot4_enet(path: Path, client_packets: list[bytes], server_packets: list[bytes] = ()) -> None:  # type: ignore[assignment]
    """A Godot 4 ENet connection (CONNECT with Godot 4's channel count), then the packets, 8 per datagram,
    reliable on channel 1."""
    w = PcapWriter(path)
    w.udp(0, CLIENT, SERVER, enet.build_datagram(enet_spec.UNASSIGNED_PEER_ID,
                                                 [enet.connect(0, 0x1234, 77, GODOT4_CHANNELS)], sent_time=1))
    w.udp(0, SERVER, CLIENT, enet.build_datagram(0, [enet.verify_connect(0, 0x1234, GODOT4_CHANNELS)], sent_time=2))
    t = 0.001
    for src, dst, packets in ((CLIENT, SERVER, client_packets), (SERVER, CLIENT, server_packets)):
        sender = EnetSender(GODOT4_CHANNELS)
        for i in range(0, len(packets), 8):
            cmds = [c for p in packets[i:i + 8] for c in sender.send(1, p)]
            t += 1e-5
            w.udp(t, src, dst, enet.build_datagram(0, cmds, sent_time=int(t * 1000) & 0xFFFF))
    w.close()


def _inline_path_calls(path: Path, n: int) -> None:
    """n SIMPLIFY_PATHs, then n REMOTE_CALLs naming their node by an inline path."""
    _godot4_enet(path, [g4.build_simplify_path("0" * 32, i, f"/root/N{i}") for i in range(n)]
                 + [g4.build_rpc(1, [], node_path=f"/root/N{i}") for i in range(n)])


def test_inline_path_calls_are_linear(tmp_path: Path) -> None:
    """Each inline-path REMOTE_CALL scanned the sender's whole path cache for the path's md5:
    8000 calls 15 s, 16000 calls 49 s."""
    for n in (6000, 12000):
        _inline_path_calls(tmp_path / f"p{n}.pcap", n)
    # each size's smaller CPU time of two alternating runs: one run under contention can read high
    runs = [[_cli("read", "-T", "jsonl", str(tmp_path / f"p{n}.pcap")) for n in (6000, 12000)] for _ in range(2)]
    for o in runs[0] + runs[1]:
        assert o.clean, o.crash
    floor = min(_cli("read", "-T", "jsonl", str(tmp_path / "p6000.pcap"), "-c", "1").cpu_seconds for _ in range(2))
    small, large = (min(r[i].cpu_seconds for r in runs) for i in (0, 1))
    a, b = max(small - floor, 0.05), large - floor
    assert b <= 2.5 * a, f"2x calls took {b / a:.1f}x the time ({a:.2f} s -> {b:.2f} s)"


def test_plot_series_fold_distinct_nodes_past_max_rows(tmp_path: Path) -> None:
    """The plot's stacks were kept per distinct node or method without a limit (every other per-label
    accumulator folds at max_rows)."""
    _inline_path_calls(tmp_path / "p.pcap", 40)
    p = profile(str(tmp_path / "p.pcap"), series=True, max_rows=10, tables=("bandwidth",))
    labels = p.traffic.series.labelled
    assert len(labels) <= 11 and any(label == "(other)" for _, label in labels)
    from godot_dissect.pcap.reader import read_pcap

    wire = sum(r.wire_bytes for r in read_pcap(str(tmp_path / "p.pcap")))
    assert sum(sum(d.values()) for d in labels.values()) == pytest.approx(wire)  # nothing lost by folding
    from godot_dissect.stats.plot import bandwidth_png

    bandwidth_png(p, tmp_path / "p.png", 400, 300)
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_inline_path_call_gets_the_md5_of_its_path_announcement() -> None:
    """What the md5 lookup is for: names from --rpc-names checked against the announced md5."""
    from godot_dissect.multiplayer import RpcNames, rpc_md5

    names = RpcNames.build({"/root/Main": ["chat", "move"]})
    s = MultiplayerSession(4, "enet", names=names)
    md5 = rpc_md5(["chat", "move"])
    s.decode(g4.build_simplify_path("f" * 32, 1, "/root/Other"), "c2s", 1)
    s.decode(g4.build_simplify_path(md5, 2, "/root/Main"), "c2s", 1)
    (call,) = s.decode(g4.build_rpc(1, [], node_path="/root/Main"), "c2s", 1)
    assert call.node == "/root/Main" and call.method == "move" and call.fields["method_verified"] is True


def test_forged_relay_senders_keep_a_bounded_cache() -> None:
    """A server relaying SIMPLIFY_PATHs from ever new (forged) sender ids: one cache per sender,
    never dropped (100k senders: 136 MB). Now MAX_CACHE_SENDERS, the least recently announcing first."""
    s = MultiplayerSession(4, "enet")
    n = MAX_CACHE_SENDERS + 100
    for i in range(n):
        s.decode(g4.build_sys("RELAY", 2 + i, g4.build_simplify_path("0" * 32, 7, f"/root/P{i}")), "s2c", 1)
    assert len(s.paths) == len(s.md5s) == len(s.path_md5s) == MAX_CACHE_SENDERS

    def call_from(peer: int) -> dict:
        (m,) = s.decode(g4.build_sys("RELAY", peer, g4.build_rpc(1, [], node_id=7)), "s2c", 1)
        return m.inner

    assert call_from(2 + n - 1).node == f"/root/P{n - 1}"  # kept
    assert call_from(2).node is None and "not announced" in call_from(2).fields["unresolved"]  # forgotten


def test_forged_relay_senders_memory_is_flat(tmp_path: Path) -> None:
    runs = []
    for n in (10000, 20000):
        _godot4_enet(tmp_path / f"r{n}.pcap", [], [g4.build_sys("RELAY", 2 + i, g4.build_simplify_path(
            "0" * 32, 1, "/root/X")) for i in range(n)])
        runs.append(_cli("read", "-T", "jsonl", str(tmp_path / f"r{n}.pcap")))
    for o in runs:
        assert o.clean, o.crash
    # one cache per sender (before): ~1 KB per sender, +10 MB
    assert runs[1].rss_mb - runs[0].rss_mb < 5, f"{runs[0].rss_mb:.0f} MB -> {runs[1].rss_mb:.0f} MB"


# --- the command line's own options -------------------------------------------------------------

@pytest.mark.parametrize("offset", ["-4", "-1", "17", "99999999"])
def test_decode_offset_outside_the_input_is_a_clear_error(offset: str) -> None:
    import subprocess

    p = subprocess.run([sys.executable, "-m", "godot_dissect", "decode", "040000000500000068656c6c6f000000",
                        f"--offset={offset}"], capture_output=True, text=True, env=harness._env(), timeout=60)
    assert p.returncode == 1 and p.stdout == ""  # was a ValueError traceback
    assert p.stderr == f"error: offset {offset}: outside the 16-byte input\n"


@pytest.mark.parametrize("args", [("-p", "70000"), ("--enet-port", "99999999999"), ("--debugger-port", "-1"),
                                  ("--max-conversations", "0"), ("--max-held-bytes", "-1")])
def test_reader_options_out_of_range_are_usage_errors(args: tuple[str, ...], tmp_path: Path) -> None:
    _udp_strings(tmp_path / "s.pcap")
    for command in ("read", "stats"):
        _usage_error(_cli(command, str(tmp_path / "s.pcap"), *args))


@pytest.mark.parametrize("refresh", ["nan", "inf", "1e-300", "0"])
def test_top_refresh_out_of_range_is_a_usage_error(refresh: str, tmp_path: Path) -> None:
    _udp_strings(tmp_path / "s.pcap")
    _usage_error(_cli("top", str(tmp_path / "s.pcap"), f"--refresh={refresh}", "--once"))


@pytest.mark.parametrize("names", ["deep", '{"Main": 5}', '{"Main": {"script": 5}}', '{"Main": [1, 2]}'])
def test_rpc_names_that_cannot_be_names_are_usage_errors(names: str, tmp_path: Path) -> None:
    """A JSON nested 100k deep raised RecursionError from json.loads (a traceback); a value other
    than a list of names was taken as is."""
    if names == "deep":
        (tmp_path / "deep.json").write_text('{"Main": ' + "[" * 100_000 + "]" * 100_000 + "}")
        names = str(tmp_path / "deep.json")
    _udp_strings(tmp_path / "s.pcap")
    _usage_error(_cli("read", str(tmp_path / "s.pcap"), "--rpc-names", names))


def test_expert_remembers_a_bounded_number_of_client_connections(tmp_path: Path) -> None:
    """One ENet CONNECT from each of many source ports: every client endpoint was remembered."""
    w = PcapWriter(tmp_path / "c.pcap")
    for i in range(30):
        w.udp(i * 1e-3, ("10.0.0.1", 41000 + i), SERVER, enet.build_datagram(
            enet_spec.UNASSIGNED_PEER_ID, [enet.connect(0, 0x1234, 100 + i, GODOT4_CHANNELS)], sent_time=1))
    w.close()
    p = profile(str(tmp_path / "c.pcap"), max_rows=10, tables=("expert",))
    assert list(p._expert.client_peer.items()) == [(f"10.0.0.1:{41000 + i}", 100 + i) for i in range(20, 30)]


# --- ENet reassembly ------------------------------------------------------------------------------

def test_enet_sequence_numbers_that_wrap_are_new_packets() -> None:
    """A reliable sequence number is 16 bits: after 65536 packets on one channel it comes back, and
    that packet is new (a repeat is one among the direction's last SEEN_WINDOW commands)."""
    from godot_dissect.enet import parse_datagram
    from godot_dissect.enet.reassembly import EnetReassembler, FragmentBudget

    r = EnetReassembler(budget=FragmentBudget())
    delivered = 0
    total = 70_000
    per = enet_spec.MAX_PACKET_COMMANDS
    for i in range(0, total, per):
        cmds = [enet.send_reliable(1, (k + 1) & 0xFFFF, b"x") for k in range(i, min(i + per, total))]
        delivered += len(r.feed(parse_datagram(enet.build_datagram(0, cmds, sent_time=1)), 1, 0.0))
    assert delivered == total and r.duplicates == 0
    again = r.feed(parse_datagram(enet.build_datagram(0, [enet.send_reliable(1, total & 0xFFFF, b"x")])), 2, 0.0)
    assert again == [] and r.duplicates == 1


def test_enet_rtt_after_the_sent_time_wraps(tmp_path: Path) -> None:
    """The header's sent time is 16 bits of milliseconds: a flow that outlives 65.536 s reuses them,
    and an ACK was matched to the first lap's send (a round trip of a minute)."""
    w = PcapWriter(tmp_path / "rtt.pcap")
    w.udp(0, CLIENT, SERVER, enet.build_datagram(enet_spec.UNASSIGNED_PEER_ID,
                                                 [enet.connect(0, 0x1234, 77, GODOT4_CHANNELS)], sent_time=1))
    for i in range(1, 300):  # every 0.512 s: the sent times come back after 128 datagrams
        t = i * 0.512
        sent = int(round(t * 1000)) & 0xFFFF
        w.udp(t, CLIENT, SERVER, enet.build_datagram(0, [enet.send_reliable(1, i, g4.build_raw(b"x"))], sent_time=sent))
        w.udp(t + 0.010, SERVER, CLIENT, enet.build_datagram(0, [enet.acknowledge(1, i, sent)]))
    w.close()
    p = profile(str(tmp_path / "rtt.pcap"), tables=("enet",), enet_ports=(hostile.ENET_PORT,))
    (row,) = [r for r in p.rows("enet") if r[0] == "10.0.0.1:40000" and r[2] == 1]
    assert row[15] == 299 and row[12] == pytest.approx(10, abs=0.01) and row[14] == pytest.approx(10, abs=0.01)
    assert row[5] == 0  # no retransmission


def test_rpc_names_lookup_does_not_scan_every_name_per_node_path() -> None:
    """Each node path not seen before scanned the whole --rpc-names table: 20,000 names and 2,000
    new paths of a capture took 13 s (20,000 paths: minutes); the table is indexed once now, and
    the per-path cache stops at MAX_CACHE_ENTRIES."""
    import time

    from godot_dissect.multiplayer import RpcNames, rpc_md5
    from godot_dissect.spec.multiplayer import MAX_CACHE_ENTRIES

    names = RpcNames.build({f"/root/N{i}": ["a", "b"] for i in range(20_000)})
    start = time.process_time()
    for i in range(MAX_CACHE_ENTRIES + 1000):
        assert names.resolve(f"/root/M{i}", 1, None).name is None
    assert time.process_time() - start < 10
    assert len(names._tables) == MAX_CACHE_ENTRIES
    r = names.resolve("/root/N5", 1, rpc_md5(["a", "b"]))
    assert (r.name, r.status) == ("b", "verified")


def test_the_human_table_draws_at_most_max_display_rows(tmp_path: Path) -> None:
    """rich lays a table out whole in memory: 20,000 conversations took 58 s and 284 MB to draw
    (MAX_ROWS allows 100,000 per table). The rest are said in the caption; csv has them all."""
    from godot_dissect.spec.stats import MAX_DISPLAY_ROWS
    from godot_dissect.stats import render

    n = MAX_DISPLAY_ROWS + 50
    w = PcapWriter(tmp_path / "c.pcap")
    for i in range(n):
        w.udp(i * 1e-3, (f"10.0.{i >> 8}.{i & 255}", 40000), hostile.SERVER, hostile.GOOD)
    w.close()
    p = profile(str(tmp_path / "c.pcap"), ports=(hostile.PORT,), tables=("conversations",))
    (table,) = render.rich_tables(p, ["conversations"])
    assert table.row_count == MAX_DISPLAY_ROWS and table.caption.startswith("50 more rows not drawn")
    assert render.csv_text(p, ["conversations"]).count("\n") == n + 1
