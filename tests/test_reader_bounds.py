"""The reader against hostile captures (issue 15's reader items): every bound is a named limit in
``spec.transports``, whatever it cuts off is an error record, memory stays flat and time linear.
Inputs are built here byte by byte; speed is judged against a floor read in the same run."""

from __future__ import annotations

import io
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from godot_dissect.codec import encode
from godot_dissect.pcap.packets import CaptureError, segments
from godot_dissect.pcap.reader import PcapReader, read_pcap
from godot_dissect.spec import transports as T

from .resegment import _PcapWriter

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ROOT / "captures"
UDP_CAPTURE = CAPTURES / "godot3-udp-all-types.pcapng"
SAMPLE = (CAPTURES / "samples" / "godot3-game-state.bin").read_bytes()  # var2bytes by Godot 3.2.3
A, B = "10.0.0.1", "10.0.0.2"
PSH_ACK, SYN, FIN_ACK = 0x18, 0x02, 0x11


def pdu(body: bytes) -> bytes:
    return T.length_prefixed(body)


def _stream(path: Path, data: bytes, dport: int = 4300, syn: bool = True, pieces: int = 1460,
            order: str = "forward") -> None:
    """One TCP direction carrying ``data`` cut into ``pieces``-byte segments."""
    w = _PcapWriter(str(path))
    if syn:
        w.tcp(A, 50000, B, dport, 999, SYN, b"")
    cuts = [(i, data[i:i + pieces]) for i in range(0, len(data), pieces)]
    if order == "reverse":
        cuts.reverse()
    for rel, piece in cuts:
        w.tcp(A, 50000, B, dport, 1000 + rel, PSH_ACK, piece)
    w.close()


def _peak_rss_mb(path: Path, *args: str) -> tuple[int, float, str]:
    # VmHWM, the process's own peak: getrusage would also count the parent's, which a child
    # started by vfork inherits as its high-water mark
    code = ("import sys\nfrom godot_dissect.pcap.reader import read_pcap\n"
            "recs = [r for r in read_pcap(sys.argv[1]) if r.kind == 'error']\n"
            "kb = next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:'))\n"
            "print(sum(1 for _ in recs), kb / 1024)\n"
            "print(recs[0].error if recs else '')")
    out = subprocess.run([sys.executable, "-c", code, str(path), *args], capture_output=True, text=True, cwd=ROOT,
                         check=True).stdout.splitlines()
    n, rss = out[0].split()
    return int(n), float(rss), out[1]


def _seconds(path: Path, **kw: object) -> float:
    t0 = time.perf_counter()
    for _ in read_pcap(str(path), **kw):  # type: ignore[arg-type]
        pass
    return time.perf_counter() - t0


# -- 3: conversations ------------------------------------------------------------------------------
def _dns_query(i: int) -> bytes:
    name = b"".join(bytes([len(p)]) + p for p in (b"host%d" % i, b"example", b"org")) + b"\0"
    return struct.pack("!HHHHHH", i & 0xFFFF, 0x0100, 1, 0, 0, 0) + name + struct.pack("!HH", 1, 1)


def test_many_conversations_stay_in_bounded_memory(tmp_path: Path) -> None:
    """100k DNS-like exchanges, each its own conversation: the table is bounded (it used to keep
    every conversation: ~300 MB)."""
    path = tmp_path / "dns.pcap"
    w = _PcapWriter(str(path))
    for i in range(100_000):
        q = _dns_query(i)
        src = f"10.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}"
        w.udp(src, 1024 + i % 60000, "10.255.0.53", 53, q)
        w.udp("10.255.0.53", 53, src, 1024 + i % 60000, q + b"\xc0\x0c\0\1\0\1\0\0\0\x3c\0\4\1\2\3\4")
    w.close()
    errors, rss, _ = _peak_rss_mb(path)
    assert errors == 0
    assert rss < 150, f"peak RSS {rss:.0f} MB"


def test_the_conversation_table_keeps_at_most_its_cap_and_reports_what_eviction_cuts(tmp_path: Path) -> None:
    """Beyond max_conversations the least recently active conversation is finished: a PDU it had
    half received becomes an error record saying why."""
    path = tmp_path / "two.pcap"
    w = _PcapWriter(str(path))
    body = encode("hello", "godot3")
    w.tcp(A, 50000, B, 4300, 999, SYN, b"")
    w.tcp(A, 50000, B, 4300, 1000, PSH_ACK, pdu(body)[:6])  # half a PDU
    w.tcp(A, 50001, B, 4300, 4999, SYN, b"")  # a second conversation
    w.tcp(A, 50001, B, 4300, 5000, PSH_ACK, pdu(body))
    w.close()
    reader = PcapReader(str(path), ports=[4300], max_conversations=1)
    recs = list(reader)
    assert [(r.sport, r.kind) for r in recs] == [(50000, "error"), (50001, "variant")]
    assert "6 bytes of a PDU of 20 bytes, never completed" in recs[0].error
    assert "--max-conversations" in recs[0].error and recs[0].offset == 0
    assert len(reader.conversations) == 0  # all finished at the end


def test_held_bytes_budget_finishes_the_heaviest_conversation(tmp_path: Path) -> None:
    big = encode(b"\x07" * 200_000, "godot3")
    path = tmp_path / "held.pcap"
    _stream(path, pdu(big)[:150_000])  # never completed
    recs = list(read_pcap(str(path), ports=[4300], max_held_bytes=64_000))
    assert recs[0].kind == "error" and "--max-held-bytes" in recs[0].error and "never completed" in recs[0].error
    # what came after is a conversation seen from its middle: its bytes are one skipped run
    assert [r.kind for r in recs[1:]] == ["error"] and "no PDU found" in recs[1].error
    reported = sum(int(r.error.split(": ")[1].split()[0]) for r in recs)
    assert reported == 150_000


def test_a_pdu_held_over_one_byte_segments_counts_its_ledger_against_the_budget(tmp_path: Path) -> None:
    """Each held segment leaves a ledger span (~200 bytes) for its frame's share of wire bytes: a PDU held
    over 1-byte segments took ~200x its own size (400k segments: 105 MB while the budget saw 400 kB), so
    the held-bytes budget counts the spans too (framing.SPAN_COST) and finishes such a conversation."""
    body = encode(b"\x07" * 40_000, "godot3")
    path = tmp_path / "trickle.pcap"
    data = pdu(encode(7, "godot3")) + pdu(body)  # a whole PDU first: the conversation is Godot's
    _stream(path, data, pieces=1)
    whole = list(read_pcap(str(path), ports=[4300]))
    assert [r.kind for r in whole] == ["variant", "variant"]  # within the default budget: decoded
    recs = list(read_pcap(str(path), ports=[4300], max_held_bytes=1_000_000))
    assert recs[0].kind == "variant" and recs[1].kind == "error" and "--max-held-bytes" in recs[1].error


def test_closed_conversations_are_forgotten(tmp_path: Path) -> None:
    path = tmp_path / "closed.pcap"
    w = _PcapWriter(str(path))
    for i in range(50):
        w.tcp(A, 40000 + i, B, 4300, 999, SYN, b"")
        w.tcp(A, 40000 + i, B, 4300, 1000, PSH_ACK, pdu(encode(i, "godot3")))
        w.tcp(A, 40000 + i, B, 4300, 1012, FIN_ACK, b"")
        w.tcp(B, 4300, A, 40000 + i, 5000, FIN_ACK, b"")
    w.close()
    seen: list[int] = []
    reader = PcapReader(str(path), "godot3", ports=[4300], on_frame=lambda s: seen.append(len(reader.conversations)))
    values = [r.value for r in reader]
    assert values == list(range(50))
    assert max(seen) <= 2  # each closed conversation left the table when it closed


# -- 4: WebSocket limits ---------------------------------------------------------------------------
UPGRADE_REQ = (b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")


def _ws_frame(payload: bytes, opcode: int = 2, fin: bool = True, claim: int | None = None) -> bytes:
    n = len(payload) if claim is None else claim
    head = bytes([(0x80 if fin else 0) | opcode])
    if n < 126:
        head += bytes([n])
    elif n < 65536:
        head += bytes([126]) + struct.pack("!H", n)
    else:
        head += bytes([127]) + struct.pack("!Q", n)
    return head + payload


def test_websocket_frame_claiming_2_63_bytes_is_one_error_and_nothing_is_buffered(tmp_path: Path) -> None:
    path = tmp_path / "ws-huge.pcap"
    good = _ws_frame(encode("before", "godot4"))
    data = UPGRADE_REQ + good + _ws_frame(b"", claim=(1 << 63) - 1) + bytes(3_000_000)
    _stream(path, data, dport=8080)
    rss_floor = _peak_rss_mb(tmp_path / "ws-huge.pcap")
    recs = list(read_pcap(str(path)))
    assert [r.kind for r in recs] == ["variant", "error"]
    assert recs[0].value == "before"
    assert f"frame claims {(1 << 63) - 1} bytes" in recs[1].error
    assert f"{len(data) - len(UPGRADE_REQ) - len(good)} bytes skipped" in recs[1].error
    # the skipped bytes are counted, not held
    reader = PcapReader(str(path))
    held = []
    reader.on_frame = lambda s: held.append(sum(c.held_bytes for c in reader.conversations.values()))
    list(reader)
    assert max(held) < 2 * 1460 + len(UPGRADE_REQ)
    assert rss_floor[0] == 1


def test_websocket_message_never_finished_is_cut_at_the_message_limit(tmp_path: Path) -> None:
    path = tmp_path / "ws-nofin.pcap"
    chunk = bytes(60_000)
    frames = [_ws_frame(chunk, opcode=2, fin=False)]
    frames += [_ws_frame(chunk, opcode=0, fin=False) for _ in range(T.MAX_WS_MESSAGE // len(chunk) + 2)]
    after = _ws_frame(encode("after", "godot4"))
    _stream(path, UPGRADE_REQ + b"".join(frames) + after, dport=8080, pieces=65_000)
    recs = list(read_pcap(str(path), dialect="godot4"))
    assert [r.kind for r in recs] == ["error", "error", "variant"]
    assert f"message longer than a Godot peer takes ({T.MAX_WS_MESSAGE}" in recs[0].error
    assert "the rest of a message longer than" in recs[1].error  # up to the next message
    sizes = [int(r.error.split(": ")[1].split()[0]) for r in recs[:2]]
    assert sum(sizes) == len(b"".join(frames))  # every byte of it reported
    assert recs[2].value == "after"


# -- 5: Godot 3 debugger argument count -------------------------------------------------------------
def test_debugger_argument_count_beyond_the_protocol_is_an_error_and_the_stream_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "dbg.pcap"
    g3 = "godot3"
    data = (pdu(encode("output", g3)) + pdu(encode(2**31 - 1, g3))
            + b"".join(pdu(encode([f"line {i}", 0], g3)) for i in range(3))
            + pdu(encode("performance", g3)) + pdu(encode(1, g3)) + pdu(encode([1.5, 2.5], g3)))
    _stream(path, data, dport=6007)
    recs = list(read_pcap(str(path), dialect="godot3"))
    assert recs[0].kind == "error" and recs[0].message == "output"
    assert f"claims {2**31 - 1} arguments" in recs[0].error and str(T.MAX_DEBUGGER3_ARGS) in recs[0].error
    assert [(r.kind, r.message) for r in recs[1:]] == [("debugger", f"line {i}") for i in range(3)] + [
        ("debugger", "performance")]
    assert recs[-1].value == [[1.5, 2.5]]


def test_debugger_message_cut_by_the_end_of_the_capture_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "dbg-cut.pcap"
    g3 = "godot3"
    _stream(path, pdu(encode("output", g3)) + pdu(encode(3, g3)) + pdu(encode(["x", 0], g3)), dport=6007)
    recs = list(read_pcap(str(path), dialect="godot3"))
    assert [r.kind for r in recs] == ["error"]
    assert "debugger message 'output' never completed (1 of 3 arguments" in recs[0].error


# -- 7a / 7b: linear reassembly and resync ---------------------------------------------------------
def test_reversed_one_byte_segments_reassemble_in_linear_time(tmp_path: Path) -> None:
    body = encode(bytes(range(256)) * 80, "godot3")  # a 20 kB PoolByteArray
    forward, backward = tmp_path / "fwd.pcap", tmp_path / "rev.pcap"
    _stream(forward, pdu(body), pieces=1)
    _stream(backward, pdu(body), pieces=1, order="reverse")
    recs = list(read_pcap(str(backward), ports=[4300]))
    assert [r.kind for r in recs] == ["variant"] and recs[0].raw == body
    floor = min(_seconds(forward, ports=[4300]) for _ in range(2))
    took = min(_seconds(backward, ports=[4300]) for _ in range(2))
    assert took < 3 * floor + 0.2, f"reversed {took:.2f} s vs in order {floor:.2f} s"


def test_resync_over_length_lookalikes_is_linear_and_one_error_per_run(tmp_path: Path) -> None:
    """Mid-stream (no SYN): 256 kB where every 4-aligned offset claims a 4 MiB PDU, then real PDUs."""
    junk = bytes.fromhex("00004000") * 65536
    good = pdu(SAMPLE) * 3
    path, floor_path = tmp_path / "junk.pcap", tmp_path / "floor.pcap"
    _stream(path, junk + good, syn=False)
    _stream(floor_path, bytes(len(junk)) + good, syn=False)  # zeros: no offset claims anything
    recs = list(read_pcap(str(path), ports=[4300]))
    errors = [r for r in recs if r.kind == "error"]
    assert len(errors) == 1, [r.error for r in errors][:5]
    assert f"{len(junk)} bytes skipped" in errors[0].error
    assert [r.raw for r in recs if r.kind == "variant"] == [SAMPLE] * 3
    floor = min(_seconds(floor_path, ports=[4300]) for _ in range(2))
    took = min(_seconds(path, ports=[4300]) for _ in range(2))
    assert took < 5 * floor + 0.5, f"look-alikes {took:.2f} s vs zeros {floor:.2f} s"


def test_huge_length_then_a_trickle_is_one_skipped_run(tmp_path: Path) -> None:
    path = tmp_path / "trickle.pcap"
    _stream(path, struct.pack("<I", 2 << 30) + bytes(20_000) + pdu(SAMPLE), pieces=1)
    recs = list(read_pcap(str(path), ports=[4300]))
    assert [r.kind for r in recs] == ["error", "variant"], [r.error for r in recs][:3]
    assert "20004 bytes skipped" in recs[0].error and recs[1].raw == SAMPLE


# -- 10: nothing lost silently ----------------------------------------------------------------------
def test_last_pdu_cut_by_the_end_of_the_capture_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "cut.pcap"
    whole = pdu(SAMPLE)
    _stream(path, whole + whole[:100])
    recs = list(read_pcap(str(path), ports=[4300]))
    assert [r.kind for r in recs] == ["variant", "error"]
    assert recs[1].offset == len(whole)
    assert f"100 bytes of a PDU of {len(whole)} bytes, never completed: the capture ends" in recs[1].error


def test_websocket_frame_cut_by_the_end_of_the_capture_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "ws-cut.pcap"
    frame = _ws_frame(encode("whole", "godot4"))
    cut = _ws_frame(encode("x" * 100, "godot4"))[:50]
    _stream(path, UPGRADE_REQ + frame + cut, dport=8080)
    recs = list(read_pcap(str(path), dialect="godot4"))
    assert [r.kind for r in recs] == ["variant", "error"]
    assert "50 bytes of a frame of" in recs[1].error and "never completed" in recs[1].error


def test_classic_pcap_cut_mid_record_is_an_error_after_the_records_before(tmp_path: Path) -> None:
    path = tmp_path / "cut.pcap"
    w = _PcapWriter(str(path))
    for _ in range(3):
        w.udp(A, 5000, B, 4242, SAMPLE)
    w.close()
    path.write_bytes(path.read_bytes()[:-10])
    got = []
    with pytest.raises(CaptureError, match="cut short"):
        for r in read_pcap(str(path), ports=[4242]):
            got.append(r)
    assert len(got) == 2
    r = subprocess.run([sys.executable, "-m", "godot_dissect", "read", str(path), "-p", "4242"], capture_output=True,
                       text=True, cwd=ROOT)
    assert r.returncode == 2 and "cut short" in r.stderr and len(r.stdout.splitlines()) == 2


def test_a_new_syn_on_a_reused_four_tuple_starts_a_new_conversation(tmp_path: Path) -> None:
    path = tmp_path / "reuse.pcap"
    w = _PcapWriter(str(path))
    first = pdu(SAMPLE)
    w.tcp(A, 50000, B, 4300, 999, SYN, b"")
    w.tcp(A, 50000, B, 4300, 1000, PSH_ACK, first[:50])  # left unfinished
    w.tcp(A, 50000, B, 4300, 777_776, SYN, b"")  # same ports, a new connection
    w.tcp(A, 50000, B, 4300, 777_777, PSH_ACK, first)
    w.close()
    recs = list(read_pcap(str(path), ports=[4300]))
    assert [r.kind for r in recs] == ["error", "variant"]
    assert "new connection" in recs[0].error and recs[1].raw == SAMPLE and recs[1].offset == 0


# -- issue 13: sources, errors in words, order with --dialect, depth-limited readings ----------------
class _Pipe(io.RawIOBase):
    """A stream that cannot seek, like standard input."""

    def __init__(self, data: bytes) -> None:
        self.data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[no-untyped-def]
        chunk = self.data.read(min(len(b), 1000))
        b[:len(chunk)] = chunk
        return len(chunk)


@pytest.mark.parametrize("wrap", ["bytesio", "pipe", "gzip-pipe"])
def test_file_objects_and_pipes_read_like_the_path(wrap: str) -> None:
    import gzip

    data = UDP_CAPTURE.read_bytes()
    src = {"bytesio": lambda: io.BytesIO(data), "pipe": lambda: io.BufferedReader(_Pipe(data)),
           "gzip-pipe": lambda: io.BufferedReader(_Pipe(gzip.compress(data)))}[wrap]()
    want = [(r.frame, r.kind, r.raw) for r in read_pcap(str(UDP_CAPTURE))]
    assert [(r.frame, r.kind, r.raw) for r in read_pcap(src)] == want


def test_directory_and_too_short_files_say_so(tmp_path: Path) -> None:
    with pytest.raises(CaptureError, match="is a directory"):
        list(read_pcap(str(tmp_path)))
    short = tmp_path / "short.pcap"
    short.write_bytes(b"\xd4\xc3")
    with pytest.raises(CaptureError, match=r"too short for a capture \(2 bytes"):
        list(read_pcap(str(short)))


def test_pcapng_errors_never_name_an_offset_past_the_end_of_the_file(tmp_path: Path) -> None:
    import re

    data = bytearray(UDP_CAPTURE.read_bytes())
    struct.pack_into("<I", data, 4, 0x00100000)  # the section header claims 1 MiB
    path = tmp_path / "claims.pcapng"
    path.write_bytes(bytes(data[:4096]))
    with pytest.raises(CaptureError) as e:
        list(segments(str(path)))
    offsets = [int(x) for x in re.findall(r"offset (\d+)", str(e.value))]
    assert offsets and all(o < 4096 for o in offsets), str(e.value)


def test_short_first_datagrams_come_out_in_capture_order_with_a_dialect_given(tmp_path: Path) -> None:
    path = tmp_path / "short.pcap"
    w = _PcapWriter(str(path))
    nil = encode(None, "godot3")  # 4 bytes: too short to confirm a conversation alone
    payloads = [nil, nil, SAMPLE, nil, SAMPLE]
    for p in payloads:
        w.udp(A, 5000, B, 4999, p)
    w.close()
    for dialect in ("auto", "godot3"):
        recs = list(read_pcap(str(path), dialect=dialect))
        assert [(r.frame, r.raw) for r in recs] == list(enumerate(payloads, 1)), dialect


def _deep_godot3(levels: int) -> bytes:
    # Array[1] of Array[1] of ... of NIL: Godot 3.2.3 reads it (no depth limit); as Godot 4 the
    # same bytes start a Projection (type 19), a 68-byte prefix
    return bytes.fromhex("1300000001000000") * levels + bytes(4)


def test_a_reading_stopped_only_by_the_depth_limit_wins_over_a_prefix_reading(tmp_path: Path) -> None:
    path = tmp_path / "deep.pcap"
    deep = _deep_godot3(T.MAX_DEPTH + 50)
    _stream(path, pdu(encode("hello", "godot3")) + pdu(deep) + pdu(encode([1, "x"], "godot3")))
    recs = list(read_pcap(str(path), ports=[4300]))
    assert [(r.kind, r.dialect) for r in recs] == [("variant", "godot3"), ("error", "godot3"),
                                                   ("variant", "godot3")]
    assert f"nesting deeper than {T.MAX_DEPTH} levels" in recs[1].error
    alone = tmp_path / "alone.pcap"
    _stream(alone, pdu(deep))
    (rec,) = read_pcap(str(alone), ports=[4300])
    assert (rec.kind, rec.dialect) == ("error", "godot3") and "nest deeper than our limit" in rec.evidence


def test_cli_limits_are_options_with_their_defaults(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "godot_dissect", "read", "--help"], capture_output=True, text=True,
                       cwd=ROOT, check=True)
    flat = " ".join(r.stdout.split())
    assert f"--max-conversations N conversations tracked at once (default {T.MAX_CONVERSATIONS})" in flat
    assert f"default {T.MAX_HELD_BYTES})" in flat and "--max-held-bytes BYTES" in flat
    path = tmp_path / "two.pcap"
    w = _PcapWriter(str(path))
    w.tcp(A, 50000, B, 4300, 999, SYN, b"")
    w.tcp(A, 50000, B, 4300, 1000, PSH_ACK, pdu(SAMPLE)[:10])
    w.tcp(A, 50001, B, 4300, 999, SYN, b"")
    w.close()
    r = subprocess.run([sys.executable, "-m", "godot_dissect", "read", str(path), "-p", "4300", "--max-conversations",
                        "1"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0 and "--max-conversations" in r.stdout and "[malformed]" in r.stdout


def test_bytes_never_captured_between_whole_pdus_are_reported(tmp_path: Path) -> None:
    """A lost segment that held exactly one PDU: the gap is an error record even though no
    partial PDU was waiting (it used to vanish)."""
    whole = pdu(SAMPLE)
    path = tmp_path / "gap.pcap"
    w = _PcapWriter(str(path))
    w.tcp(A, 50000, B, 4300, 999, SYN, b"")
    w.tcp(A, 50000, B, 4300, 1000, PSH_ACK, whole)
    w.tcp(A, 50000, B, 4300, 1000 + 2 * len(whole), PSH_ACK, whole)  # the second PDU never captured
    w.close()
    recs = list(read_pcap(str(path), ports=[4300]))
    assert [r.kind for r in recs] == ["variant", "error", "variant"]
    assert recs[1].offset == len(whole) and f"{len(whole)} bytes skipped: {len(whole)} bytes missing" in recs[1].error
