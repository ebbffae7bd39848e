"""Hostile review 10 of the analysis paths: ``stats`` against tshark's own counts when capture order is not
time order, ``query`` over datasets whose paths hold glob characters, and the command line's output paths.

Captures are built with the project's ``PcapWriter``; ground truth is what tshark prints for them.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from godot_dissect.fuzz import harness, hostile
from godot_dissect.fuzz.pcapout import PcapWriter
from godot_dissect.stats import profile

TSHARK = shutil.which("tshark")
needs_tshark = pytest.mark.skipif(TSHARK is None, reason="tshark not installed")
CAPTURES = Path(__file__).resolve().parent.parent / "captures"
A = (("10.0.0.1", 40000), hostile.SERVER)
B = (("10.0.0.3", 40001), hostile.SERVER)


def _cli(*args: str, timeout: float = 300) -> harness.Outcome:
    return harness._run(args[0], [sys.executable, "-m", "godot_dissect", *args], timeout, harness._env())


def _clock_stepped_back(path: Path) -> None:
    """Conversation A's third frame is a second before its first; every frame of conversation B is
    some 500 s before the capture's first frame (a clock stepped back, or two captures merged)."""
    w = PcapWriter(path)
    for t, (src, dst) in ((1000.0, A), (1001.5, A), (999.0, A), (500.0, B), (502.5, B)):
        w.udp(t, src, dst, hostile.GOOD)
    w.close()


def _tshark_conv_udp(pcap: Path) -> dict[tuple[str, str], tuple[float, float]]:
    """(relative start, duration) per conversation from ``tshark -q -z conv,udp``."""
    out = subprocess.run([TSHARK, "-r", str(pcap), "-q", "-z", "conv,udp"], capture_output=True, text=True,
                         check=True, timeout=120).stdout
    return {(p[0], p[2]): (float(p[-2]), float(p[-1])) for ln in out.splitlines()
            if len(p := ln.split()) > 4 and p[1] == "<->"}


def _tshark_frames(pcap: Path) -> list[tuple[float, str, int]]:
    """(epoch time, source endpoint, frame length) per frame, in capture order."""
    out = subprocess.run([TSHARK, "-r", str(pcap), "-T", "fields", "-e", "frame.time_epoch", "-e", "ip.src",
                          "-e", "udp.srcport", "-e", "frame.len"], capture_output=True, text=True, check=True,
                         timeout=120).stdout
    return [(float(t), f"{ip}:{port}", int(n)) for t, ip, port, n in (ln.split("\t") for ln in out.splitlines())]


@needs_tshark
def test_conversation_span_is_tsharks_when_frames_go_back_in_time(tmp_path: Path) -> None:
    """The span was from the conversation's first frame in capture order to its last one: a frame
    earlier in time than the first made the duration negative (-1.0 s where tshark says 2.5 s)."""
    pcap = tmp_path / "back.pcap"
    _clock_stepped_back(pcap)
    want = _tshark_conv_udp(pcap)
    t0 = _tshark_frames(pcap)[0][0]
    p = profile(str(pcap), ports=(hostile.PORT,), tables=("conversations",))
    got = {(r[1], r[2]): (r[13] - t0, r[14]) for r in p.rows("conversations")}
    assert got.keys() == want.keys()
    for key, (start, duration) in want.items():
        assert got[key][0] == pytest.approx(start, abs=1e-6) and got[key][1] == pytest.approx(duration, abs=1e-4), key


@needs_tshark
def test_bandwidth_rates_of_a_direction_before_the_first_frame(tmp_path: Path) -> None:
    """A direction whose frames all came before the capture's first frame in time had rates 0 B/s
    (min, mean and max) for its 116 bytes: its windows were numbered below the 'nothing yet' mark; a
    frame before a direction's first window was left out of the mean's span."""
    pcap = tmp_path / "back.pcap"
    _clock_stepped_back(pcap)
    frames = _tshark_frames(pcap)
    t0 = frames[0][0]
    p = profile(str(pcap), ports=(hostile.PORT,), tables=("bandwidth",), interval=1.0)
    rows = {r[0]: r for r in p.rows("bandwidth")}
    for src in ("10.0.0.1:40000", "10.0.0.3:40001"):
        mine = [(t, n) for t, s, n in frames if s == src]
        windows = [math.floor(t - t0) for t, _ in mine]  # 1 s windows aligned on the first frame
        per = {w: sum(n for (_, n), x in zip(mine, windows, strict=True) if x == w) for w in set(windows)}
        span = max(windows) - min(windows) + 1
        low = 0 if len(per) < span else min(per.values())
        row = rows[src]
        assert row[6] == sum(n for _, n in mine)  # wire bytes, as tshark's frame lengths add up
        assert row[13] == pytest.approx(sum(per.values()) / span), src  # mean: over the whole span
        if windows == sorted(windows):  # min and max: a frame earlier than the open window counts in it
            assert row[12:15] == pytest.approx((low, sum(per.values()) / span, max(per.values()))), src


# --- query over datasets with glob characters in their paths -----------------------------------------

@pytest.mark.parametrize("folder", ["o*t", "o?t", "o[u]t"])
def test_query_reads_a_dataset_folder_named_with_glob_characters_alone(folder: str, tmp_path: Path) -> None:
    """DuckDB expands *, ? and [ in each file path it is given: `query 'o*t'` read the parts of every
    sibling folder it matched as well (612 rows where the dataset holds 204)."""
    capture = CAPTURES / "godot3-udp-all-types.pcapng"
    want = len((CAPTURES / "godot3-udp-all-types.golden.jsonl").read_text(encoding="utf-8").splitlines())
    other = CAPTURES / "godot3-tcp-stream.pcapng"
    for name in ("out", "o*t", "o?t", "o[u]t", "oXt"):  # the same capture names; this folder's are the golden's
        for source, fmt in (("p.pcapng", "parquet"), ("a[1]*.pcapng", "csv")):  # glob characters in a name too
            (tmp_path / name).mkdir(exist_ok=True)
            shutil.copy(capture if name == folder else other, tmp_path / name / source)
            o = _cli("export", str(tmp_path / name / source), "-o", str(tmp_path / name), "-f", fmt, "-j", "1")
            assert o.rc == 0 and o.clean, o.crash
    q = subprocess.run([sys.executable, "-m", "godot_dissect", "query", str(tmp_path / folder),
                        "SELECT capture, count(*) FROM messages GROUP BY 1 ORDER BY 1", "-f", "csv"],
                       capture_output=True, text=True, env=harness._env(), timeout=300)
    assert q.returncode == 0, q.stderr
    assert q.stdout.splitlines() == ["capture,count_star()", f"a[1]*.pcapng,{want}", f"p.pcapng,{want}"]


# --- the plot's series --------------------------------------------------------------------------------

def _backwards(path: Path, n: int) -> None:
    """n Godot datagrams, each a second earlier than the one before."""
    w = PcapWriter(path)
    for i in range(n):
        w.udp(1e6 - i, hostile.CLIENT, hostile.SERVER, hostile.GOOD)
    w.close()


@needs_tshark
def test_plot_series_of_frames_going_back_in_time_keep_every_byte_in_bounded_windows(tmp_path: Path) -> None:
    """Windows below the first frame's were never merged (MAX_SERIES_WINDOWS counted up from 0 only) and
    never drawn: 5,000 frames each a second earlier kept 5,000 windows per series, and the plot showed one."""
    from godot_dissect.spec.stats import MAX_SERIES_WINDOWS
    from godot_dissect.stats.plot import bandwidth_png

    _backwards(tmp_path / "b.pcap", 5000)
    wire = sum(n for _, _, n in _tshark_frames(tmp_path / "b.pcap"))
    p = profile(str(tmp_path / "b.pcap"), ports=(hostile.PORT,), series=True, tables=("bandwidth",))
    s = p.traffic.series
    for table in (s.frames, s.labelled):
        (d,) = table.values()
        assert len(d) <= MAX_SERIES_WINDOWS and sum(d.values()) == wire
    fig = bandwidth_png(p, tmp_path / "b.png", 400, 300)
    (ax,) = fig.axes
    low, high = ax.get_xlim()
    assert low <= -4999 and high >= 0  # the whole span is drawn


def test_plot_series_memory_does_not_follow_frames_going_back_in_time(tmp_path: Path) -> None:
    runs = []
    for n in (50_000, 200_000):
        _backwards(tmp_path / f"b{n}.pcap", n)
        runs.append(_cli("stats", str(tmp_path / f"b{n}.pcap"), "-p", str(hostile.PORT), "-t", "bandwidth",
                         "--plot", str(tmp_path / "b.png"), "-f", "csv"))
    for o in runs:
        assert o.rc == 0 and o.clean, o.crash
    # one window per frame (before): +34 MB
    assert runs[1].rss_mb - runs[0].rss_mb < 10, f"{runs[0].rss_mb:.0f} MB -> {runs[1].rss_mb:.0f} MB"


@pytest.mark.parametrize("where", ["missing/b.png", "."])
def test_a_plot_that_cannot_be_written_is_a_usage_error_before_the_read(where: str, tmp_path: Path) -> None:
    """matplotlib's FileNotFoundError / IsADirectoryError came as a traceback once the whole capture was read."""
    capture = CAPTURES / "godot3-udp-all-types.pcapng"
    o = _cli("stats", str(capture), "--plot", str(tmp_path / where), "-f", "csv")
    assert o.rc == 2 and o.clean and o.stdout_bytes == 0, o.crash  # nothing read, no table printed
    assert not (tmp_path / "missing").exists()


# --- export options -------------------------------------------------------------------------------------

def _big_strings(path: Path, n: int) -> None:
    """n datagrams, each a Godot 3 String of 20,000 characters (a JSON line of some 40 KB)."""
    from godot_dissect.codec import encode

    msg = encode("x" * 20_000, "godot3")
    w = PcapWriter(path)
    for i in range(n):
        w.udp(i * 1e-3, hostile.CLIENT, hostile.SERVER, msg)
    w.close()


def test_a_jsonl_export_holds_at_most_batch_text_bytes_whatever_batch_rows_says(tmp_path: Path) -> None:
    """--batch-rows 10**9 made a JSONL export hold the whole capture's lines (+178 MB from 30 to 60 MB of
    datagrams); Parquet and CSV batches were already cut at BATCH_TEXT_BYTES."""
    runs = []
    for n in (1500, 3000):
        _big_strings(tmp_path / f"s{n}.pcap", n)
        runs.append(_cli("export", str(tmp_path / f"s{n}.pcap"), "-o", str(tmp_path / f"out{n}"), "-f", "jsonl",
                         "-j", "1", "-p", str(hostile.PORT), "--batch-rows", str(10**9)))
    for o in runs:
        assert o.rc == 0 and o.clean, o.crash
    assert runs[1].rss_mb - runs[0].rss_mb < 60, f"{runs[0].rss_mb:.0f} MB -> {runs[1].rss_mb:.0f} MB"
    (part,) = (tmp_path / "out3000").glob("capture=*/part-0.jsonl")
    read = subprocess.run([sys.executable, "-m", "godot_dissect", "read", str(tmp_path / "s3000.pcap"), "-p",
                           str(hostile.PORT), "-T", "jsonl"], capture_output=True, env=harness._env(), timeout=300)
    assert part.read_bytes() == read.stdout  # every line, in order, across the cut batches


@pytest.mark.parametrize("rows", ["0", "-5"])
def test_batch_rows_below_one_is_a_usage_error(rows: str, tmp_path: Path) -> None:
    """0 was taken as 'the default' (``or``); -5 failed each capture with a ValueError of its own."""
    o = _cli("export", str(CAPTURES / "godot3-udp-all-types.pcapng"), "-o", str(tmp_path / "out"),
             f"--batch-rows={rows}")
    assert o.rc == 2 and o.clean, o.crash
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("sql", ["", "   ", "-- only a comment", ";"])
def test_query_of_no_statement_is_a_usage_error(sql: str) -> None:
    """DuckDB returns None for SQL without a statement: an AttributeError traceback."""
    o = _cli("query", str(CAPTURES / "godot3-udp-all-types.pcapng"), sql)
    assert o.rc == 2 and o.clean, o.crash


# --- top ---------------------------------------------------------------------------------------------------

def test_top_over_frames_going_back_in_time_is_linear(tmp_path: Path) -> None:
    """Each endpoint kept a rate bin per frame of a capture whose times go backwards (a bin was only dropped
    once a later one came), and scanned them all per new bin: 50,000 frames a second apart took 155 s."""
    for n in (3000, 12000):
        _backwards(tmp_path / f"b{n}.pcap", n)
    runs = [[_cli("top", str(tmp_path / f"b{n}.pcap"), "-p", str(hostile.PORT), "--once") for n in (3000, 12000)]
            for _ in range(2)]
    for o in runs[0] + runs[1]:
        assert o.rc == 0 and o.clean, o.crash
    floor = min(_cli("top", str(CAPTURES / "godot3-udp-all-types.pcapng"), "--once").cpu_seconds for _ in range(2))
    small, large = (min(r[i].cpu_seconds for r in runs) for i in (0, 1))
    a, b = max(small - floor, 0.05), large - floor
    assert b <= 6 * a, f"4x frames took {b / a:.1f}x the time ({a:.2f} s -> {b:.2f} s)"


@needs_tshark
def test_top_rates_over_frames_going_back_in_time(tmp_path: Path) -> None:
    """The last second before the latest frame holds that one frame; the totals are every frame's bytes."""
    from godot_dissect.cli.top import _BINS, TopState
    from godot_dissect.pcap.reader import read_pcap

    _backwards(tmp_path / "b.pcap", 5000)
    state = TopState(live=False)
    for rec in read_pcap(str(tmp_path / "b.pcap"), ports=(hostile.PORT,), on_frame=state.frame):
        state.record(rec)
    state.done = True
    rows = {r[0]: r for r in state.rates.rows(state.now())}
    frames = _tshark_frames(tmp_path / "b.pcap")
    latest = max(t for t, _, _ in frames)
    client = rows["10.0.0.1:40000"]
    assert client[3] == sum(n for t, _, n in frames if t > latest - 1)  # up wire B/s over the last second
    assert client[6] == sum(n for _, _, n in frames)  # total up
    assert len(state.rates.bins["10.0.0.1:40000"]) <= _BINS


@pytest.mark.parametrize("capture", ["missing.pcap", "random.pcap"])
def test_top_once_over_a_capture_that_cannot_be_read_fails(capture: str, tmp_path: Path) -> None:
    """`top --once` printed the reason on its screen and exited 0 (`stats` and `read` exit 2)."""
    (tmp_path / "random.pcap").write_bytes(bytes(range(7, 107)))
    o = _cli("top", str(tmp_path / capture), "--once")
    assert o.rc == 2 and o.clean, o.crash
    s = _cli("stats", str(tmp_path / capture))
    assert s.rc == 2 and s.clean, s.crash


# --- export: partition names -----------------------------------------------------------------------------

def test_a_capture_named_in_non_ascii_letters_is_exported_and_read_back(tmp_path: Path) -> None:
    """Every non-ASCII character of a name was percent-escaped in its partition folder (é: 6 bytes), so a
    capture named with 120 é (240 bytes, a legal file name) failed: 'File name too long'."""
    import pandas as pd

    capture = CAPTURES / "godot3-udp-all-types.pcapng"
    want = len((CAPTURES / "godot3-udp-all-types.golden.jsonl").read_text(encoding="utf-8").splitlines())
    names = ["é" * 120 + ".pcap", "サーバー記録_試合%第一=ラウンド_2.pcap"]
    for name in names:
        shutil.copy(capture, tmp_path / name)
    o = _cli("export", *(str(tmp_path / n) for n in names), "-o", str(tmp_path / "out"), "-j", "1")
    assert o.rc == 0 and o.clean, o.crash
    q = subprocess.run([sys.executable, "-m", "godot_dissect", "query", str(tmp_path / "out"),
                        "SELECT capture, count(*) FROM messages GROUP BY 1 ORDER BY 1", "-f", "csv"],
                       capture_output=True, text=True, env=harness._env(), timeout=300)
    assert q.stdout.splitlines()[1:] == sorted(f"{n},{want}" for n in names)
    counts = pd.read_parquet(tmp_path / "out").groupby("capture", observed=True).size().to_dict()
    assert counts == {n: want for n in names}


def test_an_export_replaces_the_part_an_earlier_export_escaped_the_name_of(tmp_path: Path) -> None:
    """A dataset exported before kept capture=%C3%A9.pcap; exporting é.pcap again must not add a second copy."""
    capture = CAPTURES / "godot3-udp-all-types.pcapng"
    want = len((CAPTURES / "godot3-udp-all-types.golden.jsonl").read_text(encoding="utf-8").splitlines())
    shutil.copy(capture, tmp_path / "é.pcap")
    assert _cli("export", str(tmp_path / "é.pcap"), "-o", str(tmp_path / "out"), "-j", "1").rc == 0
    (part,) = (tmp_path / "out").glob("capture=*")
    part.rename(tmp_path / "out" / "capture=%C3%A9.pcap")  # the name an earlier export gave it
    assert _cli("export", str(tmp_path / "é.pcap"), "-o", str(tmp_path / "out"), "-j", "1").rc == 0
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["capture=é.pcap"]
    q = subprocess.run([sys.executable, "-m", "godot_dissect", "query", str(tmp_path / "out"),
                        "SELECT capture, count(*) FROM messages GROUP BY 1", "-f", "csv"],
                       capture_output=True, text=True, env=harness._env(), timeout=300)
    assert q.stdout.splitlines() == ["capture,count_star()", f"é.pcap,{want}"]


# --- fuzz options ------------------------------------------------------------------------------------------

@pytest.fixture
def echo_target() -> Iterator[str]:
    """A UDP server on 127.0.0.1 that sends every datagram back (it answers the fuzzer's probe)."""
    import socket
    import threading

    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                data, peer = sock.recvfrom(70_000)
            except OSError:
                continue
            sock.sendto(data, peer)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield f"udp://127.0.0.1:{sock.getsockname()[1]}"
    stop.set()
    t.join()
    sock.close()


@pytest.mark.parametrize("option", [("--timeout", "inf"), ("--timeout", "nan"), ("--reply-timeout", "inf"),
                                    ("--ready-timeout", "-1"), ("--minimise-seconds", "nan"), ("--duration", "nan"),
                                    ("--rate", "nan"), ("--rate", "-5"), ("--probe-every", "0"),
                                    ("--max-findings", "0")])
def test_fuzz_options_no_campaign_can_run_with_are_usage_errors(option: tuple[str, str], echo_target: str,
                                                                tmp_path: Path) -> None:
    """--timeout inf was an OverflowError traceback (a socket's timeout); the others ran as if sensible (NaN
    never ends a duration, 0 probes disable nothing) or failed later."""
    ok = _cli("fuzz", "--target", echo_target, "--count", "20", "--quiet", "--out", str(tmp_path / "f"))
    assert ok.rc == 0 and ok.clean, ok.crash  # the target answers: only the option is wrong below
    o = _cli("fuzz", "--target", echo_target, "--count", "20", "--quiet", "--out", str(tmp_path / "f"), *option)
    assert o.rc == 2 and o.clean, o.crash


# --- lua ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["missing/godot.lua", "."])
def test_lua_output_that_cannot_be_written_is_a_clear_error(where: str, tmp_path: Path) -> None:
    """FileNotFoundError / IsADirectoryError came as a traceback."""
    o = _cli("lua", "-o", str(tmp_path / where))
    assert o.rc == 2 and o.clean, o.crash


# --- enet round trips ---------------------------------------------------------------------------------------

def test_enet_round_trips_of_acks_captured_before_their_send_are_no_samples(tmp_path: Path) -> None:
    """An ACK whose capture time is before the datagram it acknowledges (the clock stepped back 5 s in
    between) gave a round trip of -4990 ms as the row's minimum."""
    from godot_dissect.enet import build as enet
    from godot_dissect.multiplayer import godot4 as g4
    from godot_dissect.spec import enet as enet_spec

    channels = next(k for k, v in enet_spec.GODOT_MAJOR_BY_CHANNEL_COUNT.items() if v == 4)
    client, server = ("10.0.0.1", 40000), ("10.0.0.2", hostile.ENET_PORT)
    w = PcapWriter(tmp_path / "rtt.pcap")
    w.udp(0, client, server, enet.build_datagram(enet_spec.UNASSIGNED_PEER_ID,
                                                 [enet.connect(0, 0x1234, 77, channels)], sent_time=1))
    for i in range(1, 11):
        t = 10.0 + i
        sent = int(t * 1000) & 0xFFFF
        w.udp(t, client, server, enet.build_datagram(0, [enet.send_reliable(1, i, g4.build_raw(b"x"))], sent_time=sent))
        back = t + 0.010 if i != 5 else t - 5.0  # the fifth ACK's frame carries a time before its send
        w.udp(back, server, client, enet.build_datagram(0, [enet.acknowledge(1, i, sent)]))
    w.close()
    p = profile(str(tmp_path / "rtt.pcap"), tables=("enet",), enet_ports=(hostile.ENET_PORT,))
    (row,) = [r for r in p.rows("enet") if r[0] == "10.0.0.1:40000" and r[2] == 1]
    assert row[15] == 9  # round-trip samples: the nine ACKs after their sends
    assert row[12] == pytest.approx(10, abs=0.01) and row[14] == pytest.approx(10, abs=0.01)  # min, max ms


def test_top_remembers_a_peer_id_for_at_most_max_rows_endpoints(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Every endpoint's Godot peer id was kept: one entry per client of a flood of connections (the
    endpoints themselves stop at MAX_ROWS). The limit is lowered here so that 30 clients pass it."""
    from godot_dissect.cli import top
    from godot_dissect.enet import build as enet
    from godot_dissect.enet.sender import EnetSender
    from godot_dissect.multiplayer import godot4 as g4
    from godot_dissect.pcap.reader import read_pcap
    from godot_dissect.spec import enet as enet_spec

    channels = next(k for k, v in enet_spec.GODOT_MAJOR_BY_CHANNEL_COUNT.items() if v == 4)
    server = ("10.0.0.2", hostile.ENET_PORT)
    w = PcapWriter(tmp_path / "c.pcap")
    for i in range(30):  # each client: CONNECT, VERIFY_CONNECT, an RPC each way
        c = ("10.0.0.1", 41000 + i)
        w.udp(i, c, server, enet.build_datagram(enet_spec.UNASSIGNED_PEER_ID,
                                                [enet.connect(0, 0x1234, 100 + i, channels)], sent_time=1))
        w.udp(i, server, c, enet.build_datagram(0, [enet.verify_connect(0, 0x1234, channels)], sent_time=2))
        for t, src, dst in ((i + 0.1, server, c), (i + 0.2, c, server)):
            w.udp(t, src, dst, enet.build_datagram(0, EnetSender(channels).send(1, g4.build_rpc(1, [], node_id=1)),
                                                   sent_time=3))
    w.close()
    monkeypatch.setattr(top, "MAX_ROWS", 10)
    rates = top.Rates()
    for rec in read_pcap(str(tmp_path / "c.pcap"), on_frame=rates.frame):
        rates.record(rec)
    assert len(rates.peer) <= 10
    assert rates.peer["10.0.0.2:6100"] == 1 and rates.peer["10.0.0.1:41000"] == 100  # the first ones kept


# --- read -T fields -------------------------------------------------------------------------------------------

@needs_tshark
def test_fields_keep_a_tab_in_a_string_inside_its_column(tmp_path: Path) -> None:
    """A Godot String holding a tab was printed raw in -T fields (tab-separated by default): the line had a
    column too many. tshark writes a tab in a string field as \\t (here: a DNS TXT string)."""
    import struct

    txt = b"a\tb"
    answer = b"\xc0\x0c" + struct.pack(">HHIH", 16, 1, 60, len(txt) + 1) + bytes([len(txt)]) + txt
    dns = struct.pack(">HHHHHH", 0x1234, 0x8180, 1, 1, 0, 0) + b"\x01x\x00" + struct.pack(">HH", 16, 1) + answer
    w = PcapWriter(tmp_path / "txt.pcap")
    w.udp(0, ("10.0.0.1", 53), ("10.0.0.2", 5555), dns)
    w.close()
    tshark = subprocess.run([TSHARK, "-r", str(tmp_path / "txt.pcap"), "-T", "fields", "-e", "dns.txt"],
                            capture_output=True, text=True, check=True, timeout=60).stdout
    assert tshark == "a\\tb\n"
    capture = CAPTURES / "godot3-udp-all-types.pcapng"
    out = subprocess.run([sys.executable, "-m", "godot_dissect", "read", str(capture), "-T", "fields", "-e", "frame",
                          "-e", "text", "-e", "kind"], capture_output=True, text=True, env=harness._env(), timeout=120)
    lines = out.stdout.splitlines()
    golden = (CAPTURES / "godot3-udp-all-types.golden.jsonl").read_text(encoding="utf-8")
    assert len(lines) == len(golden.splitlines()) and "\\t" in out.stdout  # the capture has a String with a tab
    assert all(len(line.split("\t")) == 3 for line in lines), [ln for ln in lines if len(ln.split("\t")) != 3]


# --- stats past max_rows --------------------------------------------------------------------------------------

@needs_tshark
@pytest.mark.parametrize("by", [None, "method"])
def test_bandwidth_past_max_rows_adds_up_to_tsharks_frames(by: str | None, tmp_path: Path) -> None:
    """Past max_rows directions (100,000 by default) the bandwidth table raised a TypeError (its "(other)"
    row's key had its fields in the wrong places): `stats` on 240,000 Godot clients was a traceback."""
    w = PcapWriter(tmp_path / "c.pcap")
    for i in range(50):
        w.udp(i * 1e-3, (f"10.0.1.{i}", 40000), hostile.SERVER, hostile.GOOD)
    w.close()
    frames = _tshark_frames(tmp_path / "c.pcap")
    p = profile(str(tmp_path / "c.pcap"), ports=(hostile.PORT,), max_rows=10, by=by, tables=("bandwidth",))
    rows = p.rows("bandwidth")
    messages, wire = (7, 6) if by is None else (8, 7)
    assert sum(r[messages] for r in rows) == len(frames)  # one message per frame
    assert sum(r[wire] for r in rows) == pytest.approx(sum(n for _, _, n in frames))
    if by is None:
        assert sum(r[5] for r in rows) == len(frames)
    other = [r for r in rows if r[0] == "(other):0" and r[messages]]
    assert len(other) == 1 and other[0][messages] == 40
