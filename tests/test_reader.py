"""The pcap reader beyond the goldens: containers, streaming memory, bad files, malformed messages."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from godot_dissect.pcap.packets import CaptureError
from godot_dissect.pcap.reader import read_pcap

from .resegment import _PcapWriter

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ROOT / "captures"
UDP_CAPTURE = CAPTURES / "godot3-udp-all-types.pcapng"
SAMPLE = (CAPTURES / "samples" / "godot3-game-state.bin").read_bytes()  # var2bytes by Godot 3.2.3


def _summary(path: Path, **kw: object) -> list[tuple]:
    return [(r.frame, r.kind, r.dialect, r.raw) for r in read_pcap(str(path), **kw)]  # type: ignore[arg-type]


def test_gzip_and_pcap_read_like_pcapng(tmp_path: Path) -> None:
    gz = tmp_path / "c.pcapng.gz"
    gz.write_bytes(gzip.compress(UDP_CAPTURE.read_bytes()))
    assert _summary(gz) == _summary(UDP_CAPTURE)
    # the same datagrams rewritten as classic pcap
    pcap = tmp_path / "c.pcap"
    w = _PcapWriter(str(pcap))
    from godot_dissect.pcap.packets import segments

    for s in segments(str(UDP_CAPTURE)):
        w.udp(s.src, s.sport, s.dst, s.dport, s.payload)
    w.close()
    assert [x[1:] for x in _summary(pcap)] == [x[1:] for x in _summary(UDP_CAPTURE)]


def _peak_rss_mb(path: Path) -> tuple[int, float]:
    code = ("import resource, sys\nfrom godot_dissect.pcap.reader import read_pcap\n"
            "n = sum(1 for _ in read_pcap(sys.argv[1]))\n"
            "print(n, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, cwd=ROOT,
                         check=True).stdout.split()
    return int(out[0]), float(out[1])


def test_memory_does_not_grow_with_the_file(tmp_path: Path) -> None:
    sizes = {}
    for n in (2_000, 40_000):
        path = tmp_path / f"{n}.pcap"
        w = _PcapWriter(str(path))
        for i in range(n):
            w.udp("127.0.0.1", 40000 + i % 7, "127.0.0.1", 4242, SAMPLE)
            if i % 5 == 0:  # and a TCP stream alongside
                w.tcp("127.0.0.1", 50000, "127.0.0.1", 4244, 1000 + (i // 5) * (len(SAMPLE) + 4), 0x18,
                      len(SAMPLE).to_bytes(4, "little") + SAMPLE)
        w.close()
        count, rss = _peak_rss_mb(path)
        assert count == n + (n + 4) // 5
        sizes[n] = (path.stat().st_size / 1e6, rss)
    (small_file, small_rss), (big_file, big_rss) = sizes[2_000], sizes[40_000]
    assert big_file > 15 * small_file
    assert big_rss - small_rss < 10, f"RSS {small_rss:.0f} MB -> {big_rss:.0f} MB"


def test_malformed_messages_are_records_and_the_run_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "bad.pcap"
    w = _PcapWriter(str(path))
    bad = SAMPLE[:-8]  # the engine's message with its last 8 bytes lost
    for payload in (SAMPLE, bad, SAMPLE):
        w.udp("127.0.0.1", 5000, "127.0.0.1", 4242, payload)
    w.close()
    recs = list(read_pcap(str(path), ports=[4242]))
    assert [r.kind for r in recs] == ["variant", "error", "variant"]
    assert recs[1].error and "offset" in recs[1].error and recs[1].raw == bad
    assert recs[2].value == recs[0].value


def test_unreadable_file_is_a_clear_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.pcap"
    junk.write_bytes(b"this is not a capture at all")
    with pytest.raises(CaptureError):
        list(read_pcap(str(junk)))
    r = subprocess.run([sys.executable, "-m", "godot_dissect", "read", str(junk)], capture_output=True, cwd=ROOT)
    assert r.returncode == 2 and b"not a pcap or pcapng" in r.stderr


def test_truncated_file_keeps_what_was_read(tmp_path: Path) -> None:
    cut = tmp_path / "cut.pcapng"
    data = UDP_CAPTURE.read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    got = []
    with pytest.raises(CaptureError):
        for r in read_pcap(str(cut)):
            got.append(r)
    assert len(got) > 10


def test_cli_jsonl_has_the_documented_keys() -> None:
    r = subprocess.run([sys.executable, "-m", "godot_dissect", "read", str(UDP_CAPTURE), "--format", "jsonl"],
                       capture_output=True, cwd=ROOT, check=True)
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(rows) == 68
    for key in ("frame", "time", "src", "sport", "dst", "dport", "transport", "kind", "dialect", "type", "text",
                "value"):
        assert key in rows[0]
    assert {row["dialect"] for row in rows} == {"godot3"}


def test_cli_filters_by_debugger_message() -> None:
    r = subprocess.run([sys.executable, "-m", "godot_dissect", "read", str(CAPTURES / "godot3-debugger.pcapng"),
                        "--message", "output", "--format", "jsonl"], capture_output=True, cwd=ROOT, check=True)
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert rows and all(row["kind"] == "debugger" and row["message"] == "output" for row in rows)


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")
def test_frame_numbers_agree_with_tshark() -> None:
    out = subprocess.run(["tshark", "-r", str(UDP_CAPTURE), "-T", "fields", "-e", "frame.number", "-e", "udp.length",
                          "-Y", "udp"], capture_output=True, text=True, check=True).stdout
    tshark = {int(f): int(n) - 8 for f, n in (line.split("\t") for line in out.splitlines())}
    for r in read_pcap(str(UDP_CAPTURE)):
        assert tshark[r.frame] == len(r.raw)


def test_godot4_debugger_messages_from_engine_bytes(godot4_run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A Godot 4.2+ debugger flow assembled from bytes the real Godot 4.6 encoded (no debugger runs
    in the web build, so the stream is built here): u32 length + [name, thread_id, data]."""
    msgs = [godot4_run.encoded[n].data for n in ("dbg4_set_pid", "dbg4_output")]
    stream = b"".join(len(m).to_bytes(4, "little") + m for m in msgs)
    path = tmp_path / "dbg4.pcap"
    w = _PcapWriter(str(path))
    w.tcp("127.0.0.1", 51000, "127.0.0.1", 6007, 999, 0x02, b"")
    for i in range(0, len(stream), 13):  # odd segment sizes, split inside prefixes too
        w.tcp("127.0.0.1", 51000, "127.0.0.1", 6007, 1000 + i, 0x18, stream[i:i + 13])
    w.close()
    recs = list(read_pcap(str(path)))
    assert [(r.kind, r.message, r.thread, r.dialect) for r in recs] == [
        ("debugger", "set_pid", 1, "godot4"), ("debugger", "output", 1, "godot4")]
    assert recs[0].value == [4242]
    assert recs[0].raw == msgs[0]


def test_multiplayer_memory_does_not_grow_with_the_file(tmp_path: Path) -> None:
    """Godot 4.6's own RPC packets (the WebSocket capture's golden) sent over and over in ENet
    reliable commands: the path caches and ENet windows stay bounded."""
    from godot_dissect.enet import build_datagram, connect, send_reliable

    golden = CAPTURES / "godot4-websocket-multiplayer.golden.jsonl"
    gold = [json.loads(line) for line in golden.read_text().splitlines()]
    c2s = [bytes.fromhex(g["hex"]) for g in gold if g["flow"].endswith(":4261") and "hex" in g]
    simplify, calls = c2s[0], [p for p in c2s if p[0] & 7 == 0 and p[0] & 0x30 == 0]  # cached node id
    assert simplify[0] == 1 and len(calls) >= 5
    sizes = {}
    for n in (1_000, 15_000):
        path = tmp_path / f"{n}.pcap"
        w = _PcapWriter(str(path))
        w.udp("127.0.0.1", 50000, "127.0.0.1", 7000, build_datagram(0xFFF, [connect(0, 9, 1234567, 255)], 1))
        w.udp("127.0.0.1", 50000, "127.0.0.1", 7000, build_datagram(0, [send_reliable(0, 1, simplify)], 2))
        for i in range(n):
            cmd = send_reliable(0, (i + 2) & 0xFFFF, calls[i % len(calls)])
            w.udp("127.0.0.1", 50000, "127.0.0.1", 7000, build_datagram(0, [cmd], i & 0xFFFF))
        w.close()
        count, rss = _peak_rss_mb(path)
        assert count == n + 2  # the calls, SIMPLIFY_PATH and the CONNECT record
        sizes[n] = rss
    assert sizes[15_000] - sizes[1_000] < 10, f"RSS {sizes[1_000]:.0f} MB -> {sizes[15_000]:.0f} MB"


def test_read_pcap_is_the_packages_api() -> None:
    """``godot_dissect.read_pcap`` (the documented entry point) reads a capture to its golden: the
    engine-printed messages' bytes, in order, per flow."""
    import godot_dissect

    golden = [json.loads(line) for line in UDP_CAPTURE.with_suffix("").with_suffix(".golden.jsonl").open()]
    got = [r for r in godot_dissect.read_pcap(str(UDP_CAPTURE))]
    for flow in {g["flow"] for g in golden}:
        want = [bytes.fromhex(g["hex"]) for g in golden if g["flow"] == flow]
        ends = flow.split(" ", 1)[1]
        assert [r.raw for r in got if f"{r.src}:{r.sport} -> {r.dst}:{r.dport}" == ends] == want
