"""The pcapng reader (``pcap/pcapng.py``) gives what dpkt's gives on real and hand-made captures,
and a damaged file is a CaptureError: never a crash, a hang or an allocation it does not hold."""

from __future__ import annotations

import io
import struct
from pathlib import Path

import dpkt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from godot_dissect.pcap import packets as packets_mod
from godot_dissect.pcap import pcapng
from godot_dissect.pcap.packets import CaptureError, segments

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = sorted((ROOT / "captures").glob("*.pcapng"))


def ours(data: bytes) -> tuple[int, list]:
    link, packets = pcapng.read(io.BytesIO(data))
    return link, list(packets)


def theirs(data: bytes) -> tuple[int, list]:
    r = dpkt.pcapng.Reader(io.BytesIO(data))
    return r.datalink(), list(r)


@pytest.mark.parametrize("capture", CAPTURES, ids=[p.stem for p in CAPTURES])
def test_real_captures_read_like_dpkt(capture: Path) -> None:
    data = capture.read_bytes()
    assert ours(data) == theirs(data)


def _block(order: str, btype: int, body: bytes) -> bytes:
    body += bytes(-len(body) % 4)
    n = len(body) + 12
    return struct.pack(order + "II", btype, n) + body + struct.pack(order + "I", n)


def _option(order: str, code: int, value: bytes) -> bytes:
    return struct.pack(order + "HH", code, len(value)) + value + bytes(-len(value) % 4)


def _capture(order: str = "<", tsresol: int | None = None, tsoffset: int | None = None, link: int = 1,
             frames: tuple[bytes, ...] = (b"\x00" * 60, b"\x01" * 61), extra: bytes = b"") -> bytes:
    shb = _block(order, 0x0A0D0D0A, struct.pack(order + "IHHq", 0x1A2B3C4D, 1, 0, -1)
                 + _option(order, 1, b"a comment") + _option(order, 0, b""))
    opts = b""
    if tsresol is not None:
        opts += _option(order, 9, bytes([tsresol]))
    if tsoffset is not None:
        opts += _option(order, 14, struct.pack(order + "q", tsoffset))
    idb = _block(order, 1, struct.pack(order + "HHI", link, 0, 65535) + opts + _option(order, 0, b""))
    out = shb + extra + idb
    for i, frame in enumerate(frames):
        ticks = 1_700_000_000_123_456 + i * 1_000_001
        if i % 2:  # the obsolete Packet Block
            out += _block(order, 2, struct.pack(order + "HHIIII", 0, 0, ticks >> 32, ticks & 0xFFFFFFFF,
                                                len(frame), len(frame)) + frame)
        else:
            out += _block(order, 6, struct.pack(order + "IIIII", 0, ticks >> 32, ticks & 0xFFFFFFFF,
                                                len(frame), len(frame)) + frame)
        out += _block(order, 5, b"statistics, skipped")
    return out


@pytest.mark.parametrize("order", ["<", ">"])
@pytest.mark.parametrize(("tsresol", "tsoffset"), [(None, None), (9, None), (0x8A, 7), (3, -100), (0, 0)])
def test_hand_made_captures_read_like_dpkt(order: str, tsresol: int | None, tsoffset: int | None) -> None:
    data = _capture(order, tsresol, tsoffset, link=113, extra=_block(order, 0x0BAD, b"custom block"))
    got = ours(data)
    assert got == theirs(data)
    assert got[0] == 113 and [len(f) for _, f in got[1]] == [60, 61]
    _same_both_ways(data)
    frames = (bytes.fromhex("ffffffffffff0000000000010800") + struct.pack("!BBHHHBBH4s4s", 0x45, 0, 36, 0, 0, 64,
              17, 0, b"\x7f\x00\x00\x01", b"\x7f\x00\x00\x02") + struct.pack("!HHHH", 1234, 6007, 16, 0)
              + b"godot!!!",) * 4
    data = _capture(order, tsresol, tsoffset, frames=frames)
    _same_both_ways(data)
    segs = list(segments(io.BytesIO(data)))
    assert [(s.frame, s.proto, s.sport, s.dport, s.payload) for s in segs] == [
        (i, "udp", 1234, 6007, b"godot!!!") for i in range(1, 5)]


def test_not_pcapng_and_missing_interface_are_errors() -> None:
    for data in (b"", b"\x0a\x0d\x0d\x0a", _capture()[:28] + b"\x00" * 3, _capture()[:40]):
        with pytest.raises((ValueError, EOFError, struct.error)):
            ours(data)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_damaged_captures_are_capture_errors(tmp_path_factory: pytest.TempPathFactory, data: st.DataObject) -> None:
    """Cut, flipped or overwritten bytes: the frames before the damage, then a CaptureError (or
    a clean end) - and never more memory than the file has, whatever the lengths claim."""
    raw = bytearray(_capture(frames=tuple(bytes([i]) * (40 + i) for i in range(6))))
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(raw) - 1))
        op = data.draw(st.sampled_from(["cut", "flip", "len"]))
        if op == "cut":
            del raw[i:]
        elif op == "flip":
            raw[i] ^= 1 << data.draw(st.integers(0, 7))
        else:  # a huge or odd claimed length
            raw[i:i + 4] = struct.pack("<I", data.draw(st.sampled_from([0, 3, 13, 0xFFFFFFFC, 0x7FFFFFF0])))
        if not raw:
            break
    path = tmp_path_factory.mktemp("pcapng") / "damaged.pcapng"
    path.write_bytes(bytes(raw))
    try:
        for _ in segments(str(path)):
            pass
    except CaptureError:
        pass


def test_claimed_lengths_allocate_nothing_the_file_lacks(tmp_path: Path) -> None:
    import tracemalloc

    good = _capture()
    path = tmp_path / "huge-claims.pcapng"
    for claim in (0xFFFFFFFC, 0x7FFFFFF0):
        path.write_bytes(good + struct.pack("<II", 6, claim) + bytes(64))
        tracemalloc.start()
        try:
            with pytest.raises(CaptureError, match="more than a capture holds"):
                list(segments(str(path)))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 4 << 20


def test_a_short_tsoffset_option_is_an_error_with_its_offset() -> None:
    # a real capture whose interface's first option (if_name "lo", 2 bytes) is relabelled as
    # if_tsoffset: a ValueError naming the option's offset, not a bare struct.error
    data = bytearray(CAPTURES[0].read_bytes())
    idb = struct.unpack_from("<I", data, 4)[0]  # right after the section header
    assert struct.unpack_from("<I", data, idb)[0] == 1 and struct.unpack_from("<H", data, idb + 16)[0] == 2
    struct.pack_into("<H", data, idb + 16, 14)
    with pytest.raises(ValueError, match=f"offset {idb + 16}: if_tsoffset option of 2 bytes"):
        ours(bytes(data))


def test_damaged_blocks_are_reported_with_their_offset() -> None:
    data = CAPTURES[0].read_bytes()
    with pytest.raises(EOFError, match=r"offset (\d+): pcapng packet block cut short") as e:
        ours(data[:5000])
    at = int(e.value.args[0].split()[1].rstrip(":"))
    assert at < 5000 and struct.unpack_from("<I", data, at)[0] == 6  # an Enhanced Packet Block starts there
    bad = bytearray(data)
    struct.pack_into("<I", bad, at + 4, 13)
    with pytest.raises(ValueError, match=f"offset {at}: bad pcapng block length 13"):
        ours(bytes(bad))


class _ReadOnly:
    """A stream with read() only (no read1): the reader takes its blocks one exact read at a time."""

    def __init__(self, data: bytes) -> None:
        self.f = io.BytesIO(data)

    def read(self, n: int = -1) -> bytes:
        return self.f.read(n)


def _outcome(stream: object) -> tuple:
    """Every packet (time, frame, original length) until the end or an error, and the error."""
    got: list = []
    try:
        link, packets = pcapng.read(stream, original_length=True)  # type: ignore[arg-type]
        for p in packets:
            got.append(p)
    except (ValueError, EOFError) as e:
        return got, (type(e), str(e))
    return got, None


def _segments_outcome(stream: object, cut: object) -> tuple:
    """Every packet's Segment (or None) until the end or an error, and the error: ``cut`` (Parser.cut) making
    them out of runs of whole blocks, or None: each packet's tuple through the pure ``packets._parse``."""
    got: list = []
    try:
        link, packets = pcapng.read(stream, original_length=True, cut=cut)  # type: ignore[arg-type]
        for p in packets:
            if type(p) is list:
                got += p
            else:
                got.append(packets_mod._parse(len(got) + 1, p[0], p[1], link, p[2]))
    except (ValueError, EOFError) as e:
        return got, (type(e), str(e))
    return got, None


def _same_both_ways(data: bytes) -> None:
    assert _outcome(io.BytesIO(data)) == _outcome(_ReadOnly(data))
    if packets_mod.fast_parse is not None:  # the packet blocks cut out and parsed in C: the same segments, errors
        assert _segments_outcome(io.BytesIO(data), packets_mod.fast_parse.cut) == _segments_outcome(
            _ReadOnly(data), None)


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_blocks_cut_from_chunks_read_as_block_by_block(path: Path) -> None:
    """The reader cuts blocks out of 64 kB chunks when the stream has read1 (files, pipes, gzip) and
    reads them one by one otherwise: the same packets and the same errors, for the committed captures
    cut short anywhere in their first blocks and at every block boundary."""
    data = path.read_bytes()
    _same_both_ways(data)
    for cut in [*range(0, min(len(data), 700), 3), *range(len(data) - 300, len(data))]:
        _same_both_ways(data[:cut])


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_damaged_blocks_read_the_same_both_ways(data: st.DataObject) -> None:
    """A committed capture with one byte changed in its first blocks: the same outcome both ways."""
    raw = bytearray(CAPTURES[0].read_bytes()[:4000])
    at = data.draw(st.integers(0, len(raw) - 1))
    raw[at] = data.draw(st.integers(0, 255))
    _same_both_ways(bytes(raw))
