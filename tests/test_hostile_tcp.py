"""Issue 15, the Lua plugin's TCP path on hostile streams (classes of ``godot_dissect.fuzz.hostile``), run
through real tshark with the generated plugin and compared with the Python reader on the same capture:
resynchronisation after an implausible length prefix (one expert item per skipped run, the same messages
decoded after it), long PDUs cut by a gap or by the end of their connection (expert info, bytes released,
the next connection decoded), and segments out of order with Wireshark's out-of-order reassembly off."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from godot_dissect.fuzz import harness, hostile
from godot_dissect.fuzz.harness import lua_script
from godot_dissect.pcap.reader import read_pcap

pytestmark = pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")

PORT_PREFS = ("-o", f"godot.tcp_ports:{hostile.PORT}")


def _tshark(path: Path, *args: str) -> list[list[str]]:
    """Rows of ``-T fields`` (frame number, godot strings, godot.skipped expert messages) from tshark with
    the plugin; fails on a Lua error."""
    r = subprocess.run(["tshark", "-n", "-X", f"lua_script:{lua_script()}", "-r", str(path), *PORT_PREFS, *args,
                        "-T", "fields", "-e", "frame.number", "-e", "godot.string", "-e", "_ws.expert.message",
                        "-E", "occurrence=a", "-E", "aggregator=|"],
                       capture_output=True, text=True, errors="replace", timeout=600)
    assert r.returncode == 0, r.stderr
    assert "Lua" not in r.stderr and "Lua Error" not in r.stdout, (r.stderr + r.stdout)[-2000:]
    return [line.split("\t") for line in r.stdout.splitlines()]


def _skipped(rows: list[list[str]], path: Path, *args: str) -> list[tuple[int, str]]:
    """(frame, message) of every godot.skipped expert item (tshark's filter on the expert's own field)."""
    r = subprocess.run(["tshark", "-n", "-X", f"lua_script:{lua_script()}", "-r", str(path), *PORT_PREFS, *args,
                        "-Y", "godot.skipped", "-T", "fields", "-e", "frame.number"],
                       capture_output=True, text=True, timeout=600)
    frames = [int(x) for x in r.stdout.split()]
    by_frame = {int(row[0]): row[2] for row in rows}
    return [(f, by_frame[f]) for f in frames]


def _lua_strings(rows: list[list[str]]) -> Counter:
    """(frame, String) pairs the plugin decoded, with their counts."""
    return Counter((int(row[0]), s) for row in rows if row[1] for s in row[1].split("|"))


def _py(path: Path) -> tuple[Counter, list]:
    """The Python reader: (frame, String) pairs of its variant records, and its error records."""
    recs = list(read_pcap(str(path), ports=[hostile.PORT]))
    strings = Counter((r.frame, r.value) for r in recs if r.kind == "variant" and isinstance(r.value, str))
    return strings, [r for r in recs if r.kind == "error"]


def _build(name: str, n: int, tmp: Path) -> Path:
    path = tmp / f"{name}-{n}.pcap"
    hostile.BY_NAME[name].build(n, path)
    return path


@pytest.mark.parametrize("passes", [(), ("-2",)], ids=["one-pass", "two-pass"])
def test_resync_after_an_implausible_prefix_is_one_item_and_agrees_with_the_reader(passes: tuple,
                                                                                    tmp_path: Path) -> None:
    path = _build("resync_junk", 64, tmp_path)
    rows = _tshark(path, *passes)
    py_strings, py_errors = _py(path)
    skipped = _skipped(rows, path, *passes)
    # one expert item for the run (not one per segment, nor a malformed 0-length PDU per 4 zero bytes)
    assert len(skipped) == 1, skipped
    assert "is implausible" in skipped[0][1]
    assert not any("Malformed" in row[2] for row in rows)
    # every message after the run decoded, in the frames the reader has them
    assert _lua_strings(rows) == py_strings and len(py_strings) >= 8
    # the frame that resynchronises says how many bytes were skipped, as the reader's one error record does
    (err,) = py_errors
    size = int(re.search(r"(\d+) bytes skipped", err.error).group(1))
    info = subprocess.run(["tshark", "-n", "-X", f"lua_script:{lua_script()}", "-r", str(path), *PORT_PREFS,
                           *passes, "-Y", f"frame.number=={err.frame}", "-T", "fields", "-e", "_ws.col.Info"],
                          capture_output=True, text=True).stdout
    assert f"{size} bytes skipped" in info


def test_connection_end_gives_up_the_held_pdu_and_the_next_connection_is_decoded(tmp_path: Path) -> None:
    """A long PDU cut by a RST, and one cut by a new SYN (new ISN) on the same addresses and ports: one
    expert item each, naming the end, and the new connections' messages decoded as the reader has them."""
    path = _build("cut_connections", 16, tmp_path)
    rows = _tshark(path)
    py_strings, py_errors = _py(path)
    skipped = _skipped(rows, path)
    assert len(skipped) == 2 == len(py_errors), skipped
    assert "never completed: the connection was reset (RST)" in skipped[0][1]
    assert "never completed: a new connection (SYN) reused its addresses and ports" in skipped[1][1]
    for e, (_, m) in zip(py_errors, skipped, strict=True):  # the same PDU size as the reader's record
        size = re.search(r"of a PDU of (\d+) bytes", e.error).group(1)
        assert f"of a PDU of {size} bytes" in m
    assert _lua_strings(rows) == py_strings and len(py_strings) == 12


def test_connection_end_without_taps_still_decodes_the_next_connection(tmp_path: Path) -> None:
    """tshark -2 runs no tap in its first pass: each PDU is given up where the next connection on the same
    addresses and ports starts (the plugin is called for another TCP conversation; the RST is not seen), with the
    same messages decoded."""
    path = _build("cut_connections", 16, tmp_path)
    rows = _tshark(path, "-2")
    py_strings, _ = _py(path)
    skipped = _skipped(rows, path, "-2")
    assert len(skipped) == 2 and all("never completed: a new connection (SYN) reused" in m for _, m in skipped)
    assert _lua_strings(rows) == py_strings


@pytest.mark.parametrize("passes", [(), ("-2",)], ids=["one-pass", "two-pass"])
def test_gap_in_a_held_pdu_is_expert_info_and_the_stream_resynchronises(passes: tuple, tmp_path: Path) -> None:
    path = _build("held_gap", 16, tmp_path)
    rows = _tshark(path, *passes)
    py_strings, py_errors = _py(path)
    skipped = _skipped(rows, path, *passes)
    assert len(skipped) == 1, skipped
    assert "never completed" in skipped[0][1] and "a gap in the capture" in skipped[0][1]
    # at the first frame after the gap, as the reader's "bytes missing" record
    assert skipped[0][0] == py_errors[0].frame and "missing from the capture" in py_errors[0].error
    assert _lua_strings(rows) == py_strings and len(py_strings) == 6


def test_ended_flows_release_what_they_held(tmp_path: Path) -> None:
    """Long PDUs of connections that ended (RST or FIN) are released: 16 x 8 MB announced is twice
    MAX_HELD_BYTES, yet no later PDU is refused for the budget (one-pass: the tap sees the ends)."""
    path = _build("ended_flows", 16, tmp_path)
    r = subprocess.run(["tshark", "-n", "-X", f"lua_script:{lua_script()}", "-r", str(path), *PORT_PREFS,
                        "-Y", "godot.not_reassembled"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and r.stdout == "", r.stdout[-2000:]
    # and the last connection's 8 KB PDU is decoded where the reader has it
    last = [rec for rec in read_pcap(str(path), ports=[hostile.PORT]) if rec.kind == "variant"][-1]
    out = subprocess.run(["tshark", "-n", "-X", f"lua_script:{lua_script()}", "-r", str(path), *PORT_PREFS,
                          "-Y", f"frame.number=={last.frame}"], capture_output=True, text=True).stdout
    assert "ByteArray[8192]" in out


@pytest.mark.parametrize("name", ["reversed"])
def test_reversed_segments_without_out_of_order_reassembly(name: str, tmp_path: Path) -> None:
    """With tcp.reassemble_out_of_order off Wireshark hands the plugin no segment that comes before one it
    holds (plain tshark flags them out-of-order / retransmission itself): no Godot expert item per segment;
    with it on, the PDU is decoded as the reader decodes it."""
    path = _build(name, 2000, tmp_path)
    off = _tshark(path, "-o", "tcp.reassemble_out_of_order:FALSE")
    assert len(_skipped(off, path, "-o", "tcp.reassemble_out_of_order:FALSE")) <= 1
    assert not any("Malformed" in row[2] for row in off)
    r = subprocess.run(["tshark", "-n", "-X", f"lua_script:{lua_script()}", "-r", str(path), *PORT_PREFS,
                        "-o", "tcp.reassemble_out_of_order:TRUE", "-Y", "godot.type"],
                       capture_output=True, text=True, timeout=600)
    frames = [int(line.split()[0]) for line in r.stdout.splitlines()]
    py = [rec.frame for rec in read_pcap(str(path), ports=[hostile.PORT]) if rec.kind == "variant"]
    # (one message each; the reader dates it by its first frame in capture order, tshark by the last)
    assert len(frames) == len(py) == 1


def _top_strings(rows: list[list[str]]) -> Counter:
    """_lua_strings without the String inside the long PDU's Array (the reader's count has top-level ones)."""
    return Counter({k: v for k, v in _lua_strings(rows).items() if k[1] != hostile.LONG_MARK})


def _py_frames(path: Path) -> Counter:
    """Frames of the reader's variant records, with their counts."""
    return Counter(r.frame for r in read_pcap(str(path), ports=[hostile.PORT]) if r.kind == "variant")


def _lua_frames(path: Path, *args: str) -> Counter:
    """Frames of the messages the plugin decoded (one godot.type per top-level message)."""
    r = subprocess.run(["tshark", "-n", "-X", f"lua_script:{lua_script()}", "-r", str(path), *PORT_PREFS, *args,
                        "-Y", "godot.type", "-T", "fields", "-e", "frame.number", "-e", "godot.string",
                        "-E", "occurrence=a", "-E", "aggregator=|"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "Lua" not in r.stderr, r.stderr[-2000:]
    return Counter(int(line.split("\t")[0]) for line in r.stdout.splitlines()
                   for s in line.split("\t")[1].split("|") if s in ("hello", hostile.LONG_MARK))


@pytest.mark.parametrize("passes", [(), ("-2",)], ids=["one-pass", "two-pass"])
def test_long_pdu_right_after_a_skipped_run_is_decoded(passes: tuple, tmp_path: Path) -> None:
    """The first PDU after a skipped run is 20 KB (past LUA_RESYNC_MAX and LUA_DESEGMENT_MAX): the plugin collects
    it as a candidate and decodes it where the reader has it (it was skipped with the run); one expert item."""
    path = tmp_path / "resync-long.pcap"
    hostile.resync_long_pdu(20, path)
    rows = _tshark(path, *passes)
    py_strings, py_errors = _py(path)
    assert len(_skipped(rows, path, *passes)) == 1
    assert _top_strings(rows) == py_strings and sum(py_strings.values()) == 7
    assert _lua_frames(path, *passes) == _py_frames(path)
    (err,) = py_errors  # the same count of skipped bytes
    size = re.search(r"(\d+) bytes skipped", err.error).group(1)
    info = subprocess.run(["tshark", "-n", "-X", f"lua_script:{lua_script()}", "-r", str(path), *PORT_PREFS,
                           *passes, "-Y", "godot.type", "-T", "fields", "-e", "_ws.col.Info"],
                          capture_output=True, text=True).stdout
    assert f"{size} bytes skipped" in info


@pytest.mark.parametrize("passes", [(), ("-2",)], ids=["one-pass", "two-pass"])
def test_skipped_run_never_joins_two_connections(passes: tuple, tmp_path: Path) -> None:
    """A skipped run's long candidate is cut by a FIN, and a new connection on the same addresses and ports sends
    the bytes it lacks: the plugin decodes no message spliced from both (tshark -2 once showed one, its first
    pass runs no tap to see the FIN) but the new connection's PDU where the reader has it; the run's end says how
    many bytes were skipped, as the reader's one error record does."""
    path = tmp_path / "lost-reused.pcap"
    hostile.lost_then_reused(20, path)
    rows = _tshark(path, *passes)
    py_strings, py_errors = _py(path)
    assert _top_strings(rows) == py_strings and sum(py_strings.values()) == 7
    assert _lua_frames(path, *passes) == _py_frames(path)
    (err,) = py_errors
    size = re.search(r"(\d+) bytes skipped", err.error).group(1)
    skipped = _skipped(rows, path, *passes)
    # the implausible prefix where the run starts, and its end at the new connection's first segment
    assert len(skipped) == 2 and "is implausible" in skipped[0][1], skipped
    assert f"{size} bytes skipped" in skipped[1][1] and skipped[1][0] > err.frame, (size, skipped)


@pytest.mark.parametrize("passes", [(), ("-2",)], ids=["one-pass", "two-pass"])
def test_connections_reusing_one_4tuple_each_end_what_they_held(passes: tuple, tmp_path: Path) -> None:
    """12 connections one after another on the same addresses and ports, each ending (FIN, RST, or FIN with a late
    segment after the next SYN) while a skipped run holds a long candidate: each run ends with its connection, with
    the reader's count of skipped bytes, and the last connection's 20 KB PDU is decoded where the reader has it
    (tshark -2 once completed the last run's candidate with it: one spliced message, one item missing)."""
    path = tmp_path / "reused.pcap"
    hostile.reused_4tuple(12, path)
    rows = _tshark(path, *passes)
    py_strings, py_errors = _py(path)
    assert _top_strings(rows) == py_strings and sum(py_strings.values()) == 12 + 4
    assert _lua_frames(path, *passes) == _py_frames(path)
    skipped = _skipped(rows, path, *passes)
    ends = [m for _, m in skipped if "no plausible PDU before" in m]
    assert len(ends) == len(py_errors) == 12, skipped
    for e, m in zip(py_errors, ends, strict=True):
        assert re.search(r"(\d+) bytes skipped", e.error).group(1) == re.match(r"(\d+) bytes skipped", m).group(1)


def test_connections_reusing_one_4tuple_scale_linearly_in_two_passes(tmp_path: Path) -> None:
    """1000 connections on one 4-tuple through tshark -2 (no tap in its first pass: the plugin sees each new
    connection by the TCP conversation it is called for) take at most ~2x the time of 500."""
    paths = [_build("reused_4tuple", n, tmp_path) for n in (500, 1000)]
    runs = [harness.run_tshark(p, extra=("-2", *PORT_PREFS)) for _ in range(2) for p in paths]
    assert all(o.clean for o in runs), [o.crash for o in runs]
    small, large = (min(o.cpu_seconds for o in runs[i::2]) for i in range(2))
    assert large <= 2.5 * small, (small, large)


@pytest.mark.parametrize("passes", [(), ("-2",)], ids=["one-pass", "two-pass"])
def test_stream_joined_part_way_with_a_long_claim_resynchronises_as_the_reader(passes: tuple, tmp_path: Path) -> None:
    """No SYN, and the first bytes claim a plausible 1 MB PDU that never comes: the plugin no longer collects
    the claim (and everything after it) but resynchronises from the first byte as the reader does: one
    expert item, the good PDUs and a 16 KB PDU decoded in the reader's frames."""
    path = tmp_path / "midway.pcap"
    hostile.midway_long_claim(1, path)
    rows = _tshark(path, *passes)
    py_strings, py_errors = _py(path)
    skipped = _skipped(rows, path, *passes)
    assert len(skipped) == 1 and "joined part-way" in skipped[0][1], skipped
    assert _top_strings(rows) == py_strings and sum(py_strings.values()) == 6
    assert _lua_frames(path, *passes) == _py_frames(path)
    assert len(py_errors) == 1 and "bytes skipped" in py_errors[0].error


def test_stream_joined_part_way_where_every_word_claims_a_long_pdu(tmp_path: Path) -> None:
    """hostile.resync: no SYN, every word claims a 4 MB PDU. The reader skips it all (one error record); the
    plugin too, with one expert item (it once collected 4 MB claims one after another, silently), holding
    little: twice the input costs about twice the time."""
    from godot_dissect.fuzz.harness import run_tshark

    outs = []
    for n in (256, 512):
        path = _build("resync", n, tmp_path)
        rows = _tshark(path)
        skipped = _skipped(rows, path)
        assert len(skipped) == 1 and "joined part-way" in skipped[0][1], skipped
        assert not _lua_strings(rows) and not _py(path)[0]
        assert not any("Malformed" in row[2] for row in rows)
        outs.append(run_tshark(path, extra=PORT_PREFS, tree=False))
    small, large = outs
    assert large.clean and large.cpu_seconds < 2.5 * small.cpu_seconds + 0.3, (small, large)
    assert large.rss_mb < small.rss_mb + 16, (small.rss_mb, large.rss_mb)


def test_held_pdu_of_a_closed_connection_is_reported_without_later_payload(tmp_path: Path) -> None:
    """A long PDU cut by the client's FIN. Where the server answers, one pass puts the item on the answer (the
    tap saw the FIN; a tap cannot add to a tree, and Wireshark calls no dissector for a FIN without payload).
    Where nothing more is sent either way, a second pass (-2, or a click in Wireshark) shows it on the PDU's last
    segment the plugin saw, as the reader has one error record per cut PDU at the end."""
    path = tmp_path / "closed.pcap"
    hostile.held_then_closed(16, path)
    py_strings, py_errors = _py(path)
    assert len(py_errors) == 2 and all("never completed" in e.error for e in py_errors)
    one = _skipped(_tshark(path), path)
    assert len(one) == 1 and "never completed: the connection was closed (FIN)" in one[0][1], one
    assert one[0][0] == max(f for f, _ in py_strings)  # the server's answer
    two = _skipped(_tshark(path, "-2"), path, "-2")
    assert len(two) == 2 and all("never completed: no more of it in the capture" in m for _, m in two), two
    for (frame, m), e in zip(two, py_errors, strict=True):  # the same PDU, on its side's last frames
        size = re.search(r"of a PDU of (\d+) bytes", e.error).group(1)
        assert f"of a PDU of {size} bytes" in m and frame <= e.frame
    assert _lua_strings(_tshark(path)) == py_strings



def _syn_again(path: Path, split: int, syn_payload: bytes = b"") -> list[str]:
    """One connection of six String messages whose first SYN comes again (same ISN, with ``syn_payload``)
    after ``split`` bytes of the stream; the messages sent."""
    from godot_dissect.codec import encode
    from godot_dissect.fuzz.hostile import CLIENT, SERVER, _Tcp
    from godot_dissect.fuzz.pcapout import SYN, PcapWriter

    sent = [f"message {i}" for i in range(6)]
    stream = b"".join(len(b).to_bytes(4, "little") + b for b in (encode(s, "godot3") for s in sent))
    w = PcapWriter(path)
    c = _Tcp(w, CLIENT, SERVER, isn=999)
    c.send(stream[:split])
    w.tcp(c.t + 1e-4, CLIENT, SERVER, 999, 0, SYN, syn_payload)
    c.t += 2e-4
    c.send(stream[split:])
    c.close()
    w.close()
    return sent


def test_a_syn_retransmitted_after_data_keeps_the_connection(tmp_path: Path) -> None:
    """The client's SYN again (same ISN) after data has flowed: Wireshark's TCP keeps it in the same
    connection (tshark -2 with the plugin decodes every message); the reader took it for a new connection
    on the same 4-tuple (its test compared the SYN with the next expected byte, not the ISN), ended the
    stream there and lost the messages after it."""
    path = tmp_path / "syn-again.pcap"
    sent = _syn_again(path, 30)
    py_strings, py_errors = _py(path)
    assert sorted(s for _, s in py_strings) == sent and not py_errors, py_errors
    lua = _lua_strings(_tshark(path, "-2"))
    assert sorted(s for _, s in lua) == sent
    assert set(py_strings) == set(lua)  # the same message in the same frame


def test_the_data_of_a_syn_repeated_mid_connection_is_not_the_streams(tmp_path: Path) -> None:
    """The first SYN again, now carrying 60 KB of zeros, between messages of a connection: a receiver past
    the handshake drops such a segment whole (RFC 5961: a challenge ACK), so the game never reads those
    bytes. The reader appended them to the stream: 14,977 error records, one per zero length prefix, and
    the messages after them lost (tshark loses those too: it marks the SYN out of order and its
    reassembly stops there)."""
    path = tmp_path / "syn-data.pcap"
    sent = _syn_again(path, 3 * 24, bytes(60_000))  # after the third message (24 bytes each)
    strings, errors = _py(path)
    assert sorted(s for _, s in strings) == sent and not errors, errors[:3]
