"""Hostile review of the reader (round 10): hand-built pcap/pcapng bytes against the capture reader, TCP and
ENet reassembly and the multiplayer decoders. Each test failed before its fix; counts come from real tshark."""

from __future__ import annotations

import io
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from godot_dissect.fuzz.hostile import CLIENT, GOOD, SERVER
from godot_dissect.fuzz.pcapout import PcapWriter
from godot_dissect.pcap.packets import CaptureError
from godot_dissect.pcap.reader import read_pcap

needs_tshark = pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")


def _pcapng(messages: int, payload: bytes = GOOD) -> tuple[bytes, list[bytes]]:
    """(section header + interface blocks, one Enhanced Packet Block per UDP datagram ``payload``)."""
    buf = io.BytesIO()
    w = PcapWriter(buf)
    head, blocks = buf.getvalue(), []
    for i in range(messages):
        at = buf.tell()
        w.udp(i * 0.01, CLIENT, SERVER, payload)
        blocks.append(buf.getvalue()[at:])
    return head, blocks


def _tshark_frames(path: Path, display_filter: str) -> list[int]:
    """Frame numbers tshark shows for the filter (it reads a damaged file up to the damage, then says so)."""
    out = subprocess.run(["tshark", "-r", str(path), "-Y", display_filter, "-T", "fields", "-e", "frame.number"],
                         capture_output=True, text=True, timeout=120).stdout
    return [int(x) for x in out.split()]


@needs_tshark
def test_messages_held_for_the_dialect_come_out_before_the_error_of_a_capture_cut_short(tmp_path: Path) -> None:
    """30 datagrams whose dialect stays ambiguous (held while it is guessed), then a packet block cut short (a
    capture copied while dumpcap was writing it): tshark shows the 30, and so must the reader, before its error.
    Was: the error left the reader with the held messages, and it gave none."""
    head, blocks = _pcapng(30)
    path = tmp_path / "cut.pcapng"
    path.write_bytes(head + b"".join(blocks) + blocks[0][:40])
    frames = _tshark_frames(path, f"udp.dstport == {SERVER[1]}")
    assert len(frames) == 30
    got = []
    with pytest.raises(CaptureError, match=r"offset \d+: pcapng packet block cut short"):
        for r in read_pcap(str(path)):
            got.append(r)
    assert [r.frame for r in got if r.kind == "variant"] == frames
    assert all(r.value == "hello" for r in got)


def _tshark_error(path: Path) -> str:
    return subprocess.run(["tshark", "-r", str(path)], capture_output=True, text=True, timeout=120).stderr


def _peak_bytes(path: Path) -> tuple[int, str, int]:
    """(records read, the CaptureError's text, peak bytes Python allocated while reading)."""
    import tracemalloc

    got, error = 0, ""
    tracemalloc.start()
    try:
        for _ in read_pcap(str(path)):
            got += 1
    except CaptureError as e:
        error = str(e)
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return got, error, peak


def _held_peak(path: Path) -> int:
    """Peak bytes Python allocated while reading ``path`` under a 1 MB held-bytes budget."""
    import tracemalloc

    tracemalloc.start()
    try:
        for _ in read_pcap(str(path), max_held_bytes=1 << 20):
            pass
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _block(btype: int, claimed: int, body: bytes) -> bytes:
    return struct.pack("<II", btype, claimed) + body


@needs_tshark
def test_a_block_claiming_2_31_bytes_is_damage_not_the_rest_of_the_file_held(tmp_path: Path) -> None:
    """A block that holds no packet (a custom type) claiming 2^31 bytes, then 8 MB of packets: tshark calls the
    file damaged at that block (its block limit); the reader must say so, at its offset, holding nothing of what
    follows. Was: the rest of the file read into one block, then a silent end (every packet after it lost)."""
    head, blocks = _pcapng(3)
    _, tail = _pcapng(1)
    path = tmp_path / "huge-block.pcapng"
    at = len(head) + sum(map(len, blocks[:3]))
    path.write_bytes(head + b"".join(blocks) + _block(0xBAD, 0x7FFFFFF0, bytes(8)) + tail[0] * 90_000)
    assert "too large" in _tshark_error(path)
    got, error, peak = _peak_bytes(path)
    assert got == 3 and f"offset {at}: pcapng block length {0x7FFFFFF0}" in error
    assert peak < 4 << 20


@needs_tshark
def test_a_block_holding_no_packet_cut_short_is_an_error(tmp_path: Path) -> None:
    """The capture ends inside an Interface Statistics Block: tshark says the file was cut short; so must the
    reader. Was: a silent end, as if the file were whole."""
    head, blocks = _pcapng(3)
    path = tmp_path / "cut-isb.pcapng"
    at = len(head) + sum(map(len, blocks))
    path.write_bytes(head + b"".join(blocks) + _block(5, 100, bytes(20)))
    assert "cut short" in _tshark_error(path)
    got, error, _ = _peak_bytes(path)
    assert got == 3 and f"offset {at}: pcapng block cut short (28 of 100 bytes)" in error
    with open(path, "rb") as f, pytest.raises(CaptureError, match=f"offset {at}: pcapng block cut short"):
        list(read_pcap(_ReadOnly(f)))  # a stream without read1 (read block by block): the same


class _ReadOnly:
    def __init__(self, f: io.BufferedReader) -> None:
        self.f = f

    def read(self, n: int = -1) -> bytes:
        return self.f.read(n)


@needs_tshark
def test_a_classic_pcap_record_claiming_more_than_a_frame_is_damage_not_held(tmp_path: Path) -> None:
    """A classic pcap record capturing 16 MB (all there): tshark calls the file damaged (no frame is longer than
    262144 bytes); the reader must too, naming the record's offset, without holding the 16 MB. Was: read whole."""
    big = 16 << 20
    header = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    path = tmp_path / "big-record.pcap"
    path.write_bytes(header + struct.pack("<IIII", 0, 0, big, big) + bytes(big))
    assert "bigger than maximum of 262144" in _tshark_error(path)
    got, error, peak = _peak_bytes(path)
    assert got == 0 and f"offset 24: pcap record of {big} captured bytes" in error
    assert peak < 4 << 20


def _section(order: str, interfaces: list[tuple[int, int]], packets: list[tuple[int, int, bytes]]) -> bytes:
    """A pcapng section in byte order ``order``: interfaces (link type, if_tsresol), then packets (interface,
    ticks, frame) as Enhanced Packet Blocks."""
    def block(btype: int, body: bytes) -> bytes:
        body += bytes(-len(body) % 4)
        return struct.pack(order + "II", btype, len(body) + 12) + body + struct.pack(order + "I", len(body) + 12)

    out = block(0x0A0D0D0A, struct.pack(order + "IHHq", 0x1A2B3C4D, 1, 0, -1))
    for link, tsresol in interfaces:
        out += block(1, struct.pack(order + "HHI", link, 0, 262144) + struct.pack(order + "HH", 9, 1)
                     + bytes([tsresol, 0, 0, 0]) + bytes(4))
    for number, ticks, frame in packets:
        out += block(6, struct.pack(order + "IIIII", number, ticks >> 32, ticks & 0xFFFFFFFF, len(frame), len(frame))
                     + frame)
    return out


def _ethernet_and_raw_frames() -> tuple[bytes, bytes]:
    """One Godot datagram as an Ethernet frame and as a raw IP packet (LINKTYPE_RAW)."""
    buf = io.BytesIO()
    w = PcapWriter(buf)
    at = buf.tell()
    w.udp(0, CLIENT, SERVER, GOOD)
    caplen = struct.unpack_from("<I", buf.getvalue(), at + 20)[0]
    ethernet = buf.getvalue()[at + 28:at + 28 + caplen]
    return ethernet, ethernet[14:]


def _read_three_ways(path: Path, monkeypatch: pytest.MonkeyPatch) -> list[list[tuple[int, float]]]:
    """(frame, time) of the records read from the file (chunks, packet blocks cut in C when built), from a
    stream without read1 (block by block) and with the pure parser."""
    from godot_dissect.pcap import packets

    ways = [[(r.frame, r.time) for r in read_pcap(str(path))]]
    with open(path, "rb") as f:
        ways.append([(r.frame, r.time) for r in read_pcap(_ReadOnly(f))])
    monkeypatch.setattr(packets, "fast_parse", None)
    ways.append([(r.frame, r.time) for r in read_pcap(str(path))])
    return ways


@needs_tshark
def test_packets_of_a_second_interface_take_its_link_type_and_time_resolution(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A capture of two interfaces (``dumpcap -i eth0 -i any``): interface 0 Ethernet in microseconds, interface 1
    raw IP in nanoseconds, packets alternating. tshark shows all four datagrams at their times; so must the reader.
    Was: every packet read with interface 0's link type and resolution (the raw-IP ones silently lost)."""
    ethernet, raw = _ethernet_and_raw_frames()
    path = tmp_path / "two-interfaces.pcapng"
    path.write_bytes(_section("<", [(1, 6), (101, 9)], [(0, 1_000_000, ethernet), (1, 2_000_000_000, raw),
                                                         (0, 3_000_000, ethernet), (1, 4_000_000_000, raw)]))
    out = subprocess.run(["tshark", "-r", str(path), "-Y", f"udp.dstport == {SERVER[1]}", "-T", "fields",
                          "-e", "frame.number", "-e", "frame.time_epoch"], capture_output=True, text=True).stdout
    want = [(int(n), float(t)) for n, t in (line.split() for line in out.splitlines())]
    assert [n for n, _ in want] == [1, 2, 3, 4]
    for got in _read_three_ways(path, monkeypatch):
        assert got == want


@needs_tshark
def test_a_second_section_in_the_other_byte_order_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two pcapng files concatenated, a little-endian one and a big-endian one (a valid pcapng file: each section
    has its own byte order and interfaces): tshark shows both datagrams; so must the reader. Was: the second
    section's blocks read in the first one's byte order (its packets silently lost)."""
    ethernet, raw = _ethernet_and_raw_frames()
    path = tmp_path / "two-sections.pcapng"
    path.write_bytes(_section("<", [(1, 6)], [(0, 1_000_000, ethernet)])
                     + _section(">", [(101, 6)], [(0, 2_000_000, raw)]))
    out = subprocess.run(["tshark", "-r", str(path), "-Y", f"udp.dstport == {SERVER[1]}", "-T", "fields",
                          "-e", "frame.number", "-e", "frame.time_epoch"], capture_output=True, text=True).stdout
    want = [(int(n), float(t)) for n, t in (line.split() for line in out.splitlines())]
    assert [n for n, _ in want] == [1, 2]
    for got in _read_three_ways(path, monkeypatch):
        assert got == want


@needs_tshark
def test_a_packet_of_an_interface_its_section_lacks_is_damage(tmp_path: Path) -> None:
    """A packet naming interface 7 of a section that describes one: tshark calls the file damaged there; so must
    the reader, after the packet before it. Was: read as interface 0's."""
    ethernet, _ = _ethernet_and_raw_frames()
    path = tmp_path / "no-such-interface.pcapng"
    path.write_bytes(_section("<", [(1, 6)], [(0, 1_000_000, ethernet), (7, 2_000_000, ethernet)]))
    assert "interface index 7 is not less than section interface count 1" in _tshark_error(path)
    at = len(_section("<", [(1, 6)], [(0, 1_000_000, ethernet)]))
    got = []
    with pytest.raises(CaptureError, match=f"offset {at}: packet block of interface 7, but its section describes 1"):
        for r in read_pcap(str(path)):
            got.append(r.frame)
    assert got == [1]


def test_forged_senders_each_announcing_many_paths_keep_one_bounded_cache() -> None:
    """A server relaying SIMPLIFY_PATHs from two (forged) senders, 33000 distinct paths each: each sender stays
    within the per-sender bound, but 4096 such senders held 4096 x 65536 entries (~430 bytes each: 64 senders x
    4000 paths took 110 MB and grew with the capture). Now MAX_CACHE_ENTRIES over all senders of a table, the
    least recently announcing sender's oldest entry dropped first; the latest announcements still resolve."""
    from godot_dissect.multiplayer import MultiplayerSession
    from godot_dissect.multiplayer import godot4 as g4
    from godot_dissect.spec.multiplayer import MAX_CACHE_ENTRIES

    s = MultiplayerSession(4, "enet")
    per_sender = MAX_CACHE_ENTRIES // 2 + 250
    for sender in (2, 3):
        for i in range(per_sender):
            s.decode(g4.build_sys("RELAY", sender, g4.build_simplify_path(f"{i:032x}", i, f"/root/P{sender}/N{i}")),
                     "s2c", 1)
    for table in (s.paths, s.md5s, s.path_md5s):
        assert sum(map(len, table.values())) == MAX_CACHE_ENTRIES

    def call_from(peer: int, node_id: int) -> object:
        (m,) = s.decode(g4.build_sys("RELAY", peer, g4.build_rpc(1, [], node_id=node_id)), "s2c", 1)
        return m.inner

    assert call_from(3, per_sender - 1).node == f"/root/P3/N{per_sender - 1}"
    assert call_from(3, 0).node == "/root/P3/N0"
    assert call_from(2, 999).node == "/root/P2/N999"
    assert call_from(2, 0).node is None and "not announced" in call_from(2, 0).fields["unresolved"]


def _upgrade_then_trickle(path: Path, segments: int) -> None:
    """A TCP connection whose client sends "GET " (an HTTP head that could still become a WebSocket upgrade: its
    bytes are held until it is whole) and whose server then sends ``segments`` 1-byte segments, all held too."""
    from godot_dissect.fuzz.pcapout import ACK, PSH, SYN

    client, server = ("10.0.0.2", 40000), ("10.0.0.1", 8080)
    w = PcapWriter(path)
    w.tcp(0, client, server, 999, 0, SYN)
    w.tcp(0, server, client, 4999, 1000, SYN | ACK)
    w.tcp(0, client, server, 1000, 5000, PSH | ACK, b"GET ")
    for i in range(segments):
        w.tcp(0, server, client, 5000 + i, 1004, PSH | ACK, b"a")
    w.close()


def _trickle_alone(path: Path, segments: int) -> None:
    """The same server segments with no "GET " before them: nothing held (the floor)."""
    from godot_dissect.fuzz.pcapout import ACK, PSH

    client, server = ("10.0.0.2", 40000), ("10.0.0.1", 8080)
    w = PcapWriter(path)
    for i in range(segments):
        w.tcp(0, server, client, 5000 + i, 1004, PSH | ACK, b"a")
    w.close()


def test_bytes_held_for_an_unfinished_http_head_cost_linear_time(tmp_path: Path) -> None:
    """While a connection's first bytes could still be an HTTP upgrade, every new segment re-joined and re-summed
    every chunk held so far (16000 1-byte segments: seconds; 64 KB of them, the bound: minutes). Now the head and
    the count are kept as chunks come: the time of the same segments with nothing held, within a small factor."""
    import time

    held, floor_path = tmp_path / "held.pcapng", tmp_path / "floor.pcapng"
    _upgrade_then_trickle(held, 16000)
    _trickle_alone(floor_path, 16000)

    def seconds(path: Path) -> float:
        t0 = time.perf_counter()
        for _ in read_pcap(str(path)):
            pass
        return time.perf_counter() - t0

    floor = min(seconds(floor_path) for _ in range(2))
    took = min(seconds(held) for _ in range(2))
    assert took < 3 * floor + 0.2, f"held {took:.2f} s vs nothing held {floor:.2f} s"


def test_chunks_held_for_an_unfinished_http_head_count_their_memory_against_the_budget(tmp_path: Path) -> None:
    """20000 1-byte segments held behind an unfinished HTTP head: ~4 MB of Python objects, counted as their 20000
    bytes, so a 1 MB held-bytes budget never cut them. Now each held chunk is counted as the memory it takes."""

    path = tmp_path / "held.pcapng"
    _upgrade_then_trickle(path, 20000)
    peak = _held_peak(path)
    assert peak < 2 << 20, f"peak {peak / 2**20:.1f} MB under a 1 MB held-bytes budget"


def test_a_zstd_enet_datagram_declaring_2_40_bytes_is_an_error_and_the_flow_goes_on(tmp_path: Path) -> None:
    """The engines' zstd-compressed ENet pair (captures/godot3-enet-compressed) with one datagram more: the
    client's header and a zstd frame whose header declares 2^40 bytes of content. zstandard allocates what a frame
    declares: MemoryError, a traceback out of the reader. Godot decompresses into its MTU-sized buffer and drops
    such a datagram; the reader must give one error record naming it, and every record it gave without it."""
    pytest.importorskip("zstandard", reason="zstd datagrams need the optional 'zstandard' package")
    from godot_dissect.enet import parse_datagram
    from godot_dissect.pcap.packets import segments

    from .test_enet_compressed import PCAP, pair_ports

    if not PCAP.exists():
        pytest.skip("captures/godot3-enet-compressed.pcapng not made")
    ports = pair_ports("zstd")
    pair = [s for s in segments(str(PCAP)) if s.proto == "udp" and {s.sport, s.dport} <= ports]
    client = next(s for s in pair[3:] if parse_datagram(s.payload, "zstd").compressed)
    head = parse_datagram(client.payload, "zstd").header_size
    bomb = client.payload[:head] + struct.pack("<IB", 0xFD2FB528, 0xE0) + struct.pack("<Q", 1 << 40) + b"\x01\0\0"
    plain, hostile = tmp_path / "pair.pcapng", tmp_path / "bomb.pcapng"
    for path, extra in ((plain, None), (hostile, bomb)):
        w = PcapWriter(path)
        for i, s in enumerate(pair):
            w.udp(s.time, (s.src, s.sport), (s.dst, s.dport), s.payload)
            if i == 10 and extra is not None:
                w.udp(s.time, (client.src, client.sport), (client.dst, client.dport), extra)
        w.close()

    def lines(path: Path) -> list[tuple]:
        return [(r.kind, r.command, r.value if r.kind != "error" else r.error) for r in
                read_pcap(str(path), enet_compression="zstd", enet_ports=ports)]

    want, got = lines(plain), lines(hostile)
    errors = [x for x in got if x[0] == "error"]
    assert len(errors) == 1 and "zstd frame declares 1099511627776 bytes" in errors[0][2]
    assert [x for x in got if x[0] != "error"] == [x for x in want if x[0] != "error"]
    assert sum(x[0] == "rpc" for x in want) >= 5


def test_godot3_debugger_arguments_held_count_what_they_take(tmp_path: Path) -> None:
    """Two Godot 3 games each sending an "output" message of a million float arguments, interleaved, never
    finished: each argument (8 bytes) was held as its decoded value (~40 bytes with its list slot) and counted
    as its 8 bytes, so a 1 MB held-bytes budget let 6 MB be held (a 4 MB budget: 22 MB). Now arguments are held
    as bytes, decoded when the message is whole; the budget cuts each unfinished message with an error record."""
    import tracemalloc

    from godot_dissect.codec import encode
    from godot_dissect.fuzz.pcapout import ACK, PSH, SYN

    def pdu(v: object) -> bytes:
        b = encode(v, "godot3")
        return struct.pack("<I", len(b)) + b

    path = tmp_path / "debugger.pcapng"
    w = PcapWriter(path)
    server, clients, seqs = ("10.0.0.1", 6007), [(f"10.0.1.{2 + c}", 40000) for c in range(2)], {}
    for c in clients:
        w.tcp(0, c, server, 999, 0, SYN)
        head = pdu("output") + pdu(1_000_000)
        w.tcp(0, c, server, 1000, 0, PSH | ACK, head)
        seqs[c] = 1000 + len(head)
    chunk = b"".join(pdu(i + 0.5) for i in range(100))
    for _ in range(800):
        for c in clients:
            w.tcp(0, c, server, seqs[c], 0, PSH | ACK, chunk)
            seqs[c] += len(chunk)
    w.close()
    errors = []
    tracemalloc.start()
    try:
        for r in read_pcap(str(path), dialect="godot3", max_held_bytes=1 << 20):
            if r.kind == "error":
                errors.append(r.error)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert any("debugger message 'output' never completed" in e for e in errors)
    assert peak < 3 << 20, f"peak {peak / 2**20:.1f} MB under a 1 MB held-bytes budget"


def test_tiny_datagrams_held_while_unconfirmed_count_what_they_take(tmp_path: Path) -> None:
    """1000 UDP conversations each sending 64 4-byte NILs (held until a longer datagram confirms them: a lone null
    proves little): each held datagram took ~280 bytes and counted 4 against the held-bytes budget, so under a
    1 MB budget ~16 MB were held (10000 conversations: ~200 MB). Now each held item counts its memory
    (HELD_ITEM_COST), and the budget finishes the heaviest conversations, each held_bytes taken once per check."""

    path = tmp_path / "nils.pcapng"
    w = PcapWriter(path)
    for i in range(64):
        for c in range(1000):
            w.udp(i * 1e-3, (f"10.1.{c // 250}.{2 + c % 250}", 40000), ("10.0.0.1", 7000), b"\0\0\0\0")
    w.close()
    peak = _held_peak(path)
    assert peak < 6 << 20, f"peak {peak / 2**20:.1f} MB under a 1 MB held-bytes budget"


def _websocket_texts(path: Path, frames: int) -> None:
    """A WebSocket upgrade on port 8080 (request, 101 response), then ``frames`` empty text frames from the server,
    500 to a segment: no binary message, so the conversation's dialect is never guessed."""
    from godot_dissect.fuzz.pcapout import ACK, PSH, SYN

    client, server = ("10.0.0.2", 40000), ("10.0.0.1", 8080)
    req = (b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
    resp = (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n")
    w = PcapWriter(path)
    w.tcp(0, client, server, 999, 0, SYN)
    w.tcp(0, server, client, 4999, 1000, SYN | ACK)
    w.tcp(0, client, server, 1000, 5000, PSH | ACK, req)
    w.tcp(0, server, client, 5000, 1000 + len(req), PSH | ACK, resp)
    seq = 5000 + len(resp)
    for _ in range(frames // 500):
        w.tcp(0, server, client, seq, 1000 + len(req), PSH | ACK, b"\x81\x00" * 500)
        seq += 1000
    w.close()


@needs_tshark
def test_websocket_text_messages_before_any_binary_one_are_not_all_held(tmp_path: Path) -> None:
    """60000 empty WebSocket text frames and no binary message: each text message was held (with its ~250 bytes
    of objects, counted as its 0 bytes against the held-bytes budget) until a binary message would settle the
    dialect, so memory grew with the capture (800000 frames: 190 MB). Now at MAX_GUESS_HELD held items those
    that need no dialect come out; every frame tshark shows is a text record, in order."""
    import tracemalloc

    path = tmp_path / "texts.pcapng"
    _websocket_texts(path, 60000)
    frames = _tshark_frames(path, "websocket.opcode == 1")
    assert len(frames) == 120  # (tshark: one row per segment; 500 frames each)
    texts, others, seen = 0, 0, set()
    tracemalloc.start()
    try:
        for r in read_pcap(str(path)):
            texts, others = texts + (r.kind == "text"), others + (r.kind != "text")
            seen.add(r.frame)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (texts, others) == (60000, 0) and sorted(seen) == frames
    assert peak < 3 << 20, f"peak {peak / 2**20:.1f} MB"


def test_a_section_of_a_million_interfaces_is_damage_past_the_limit(tmp_path: Path) -> None:
    """A pcapng of one packet, then a million Interface Description Blocks (20 MB): each interface was remembered
    for the packets that could name it, so memory grew with the file (~90 bytes each). Now past
    MAX_CAPTURE_INTERFACES the section is damage, an error naming the block's offset, and memory stays flat."""
    import tracemalloc

    from godot_dissect.spec.transports import MAX_CAPTURE_INTERFACES

    ethernet, _ = _ethernet_and_raw_frames()
    first = _section("<", [(1, 6)], [(0, 1_000_000, ethernet)])
    idb = struct.pack("<IIHHII", 1, 20, 1, 0, 262144, 20)
    path = tmp_path / "interfaces.pcapng"
    path.write_bytes(first + idb * 1_000_000)
    at = len(first) + len(idb) * (MAX_CAPTURE_INTERFACES - 1)  # the section's first interface is in ``first``
    got, error = [], ""
    tracemalloc.start()
    try:
        for r in read_pcap(str(path)):
            got.append(r.frame)
    except CaptureError as e:
        error = str(e)
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert got == [1] and f"offset {at}: more than {MAX_CAPTURE_INTERFACES} interfaces" in error
    assert peak < 16 << 20, f"peak {peak / 2**20:.0f} MB"


def test_the_budget_is_checked_as_held_items_grow_not_only_as_bytes_come(tmp_path: Path) -> None:
    """600 WebSocket conversations, each an upgrade, one ambiguous binary message and 254 empty text frames in one
    segment: every conversation holds 255 items (~65 KB counted) for ~1 KB of capture, and the held-bytes budget was
    checked only per 1/16 of it in capture bytes, so a 2 MB budget held ~10 MB between checks (8000 such
    conversations under the 64 MB default: 315 MB). Now the items a packet makes held count toward the check."""
    import tracemalloc

    from godot_dissect.fuzz.pcapout import ACK, PSH, SYN

    req = (b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
    resp = (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n")
    path, server = tmp_path / "many.pcapng", ("10.0.0.1", 8080)
    w = PcapWriter(path)
    for c in range(600):
        client = (f"10.1.{c // 250}.{2 + c % 250}", 40000)
        w.tcp(0, client, server, 999, 0, SYN)
        w.tcp(0, server, client, 4999, 1000, SYN | ACK)
        w.tcp(0, client, server, 1000, 5000, PSH | ACK, req)
        w.tcp(0, server, client, 5000, 1000 + len(req), PSH | ACK,
              resp + b"\x82" + bytes([len(GOOD)]) + GOOD + b"\x81\x00" * 254)
    w.close()
    kinds: dict[str, int] = {}
    tracemalloc.start()
    try:
        for r in read_pcap(str(path), max_held_bytes=2 << 20):
            kinds[r.kind] = kinds.get(r.kind, 0) + 1
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert kinds == {"variant": 600, "text": 600 * 254}
    assert peak < 5 << 20, f"peak {peak / 2**20:.1f} MB under a 2 MB held-bytes budget"


@needs_tshark
def test_a_packet_before_any_interface_is_damage(tmp_path: Path) -> None:
    """A section whose first block is a packet (no interface described yet), then an interface and a packet:
    tshark calls the file damaged at the first packet; the reader skipped it without a word and read on."""
    ethernet, _ = _ethernet_and_raw_frames()
    whole = _section("<", [(1, 6)], [(0, 1_000_000, ethernet)])
    shb_len = struct.unpack_from("<I", whole, 4)[0]
    packet = _section("<", [], [(0, 0, ethernet)])[shb_len:]
    path = tmp_path / "packet-first.pcapng"
    path.write_bytes(whole[:shb_len] + packet + whole[shb_len:])
    assert "interface index 0 is not less than section interface count 0" in _tshark_error(path)
    with pytest.raises(CaptureError, match=f"offset {shb_len}: packet block of interface 0, but its section "
                                           f"describes 0"):
        list(read_pcap(str(path)))
