"""The compiled header parse (``pcap/_packets.c``) returns exactly what ``packets._parse`` returns:
on every frame of every committed capture, and on frames cut short, corrupted or crafted at the
edges (VLAN tags, IP options, fragments, a TCP data offset past the end, lengths that lie)."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest

from godot_dissect.pcap import packets as P
from godot_dissect.pcap.source import open_packets

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = sorted((ROOT / "captures").glob("*.pcap*"))

pytestmark = pytest.mark.skipif(P.fast_parse is None, reason="the _packets extension is not built")


def _same(frame: int, ts: float, buf: bytes, link: int, frame_len: int) -> None:
    want = P._parse(frame, ts, buf, link, frame_len)
    got = P.fast_parse(frame, ts, buf, link, frame_len)  # type: ignore[misc]
    assert got == want, (buf.hex(), got, want)
    if got is not None:
        assert [type(getattr(got, f)) for f in got.__slots__] == [type(getattr(want, f)) for f in want.__slots__]


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_every_frame_of_the_committed_captures(path: Path) -> None:
    link, pkts = open_packets(str(path))
    n = 0
    for frame, (ts, buf, orig, link) in enumerate(pkts, 1):
        _same(frame, ts, bytes(buf), link, orig)
        n += 1
    assert n > 0


def _eth(payload: bytes, et: int = 0x0800, vlans: int = 0) -> bytes:
    tags = b"".join(struct.pack("!HH", 0x8100, 7) for _ in range(vlans))
    return b"\x02" * 6 + b"\x04" * 6 + tags + struct.pack("!H", et) + payload


def _ip4(proto: int, l4: bytes, *, ihl: int = 5, total: int | None = None, frag: int = 0) -> bytes:
    opts = b"\x01" * (max(ihl, 5) * 4 - 20)
    tot = 20 + len(opts) + len(l4) if total is None else total
    return struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, tot, 1, frag, 64, proto, 0, bytes([10, 0, 0, 1]),
                       bytes([192, 168, 1, 255])) + opts + l4


def test_crafted_edges_and_random_damage() -> None:
    udp = struct.pack("!HHHH", 4242, 4243, 16, 0) + b"payload!"
    tcp = struct.pack("!HHIIBBHHH", 5000, 6000, 2**32 - 5, 9, 0x50, 0x18, 100, 0, 0) + b"data"
    frames = [
        _eth(_ip4(17, udp)), _eth(_ip4(6, tcp)), _eth(_ip4(17, udp), vlans=2), _eth(_ip4(17, udp, ihl=7)),
        _eth(_ip4(17, udp, total=0)), _eth(_ip4(17, udp, total=24)), _eth(_ip4(17, udp, total=5000)),
        _eth(_ip4(17, udp, frag=0x2000)), _eth(_ip4(17, udp, frag=0x0001)), _eth(_ip4(17, udp, frag=0x4000)),
        _eth(_ip4(6, tcp[:12] + b"\xf0" + tcp[13:])), _eth(_ip4(6, tcp, ihl=2)), _eth(_ip4(1, b"icmp....")),
        _eth(b"\x60" + b"\x00" * 60, et=0x86DD), _eth(b"junk", et=0x0806), _eth(_ip4(17, udp))[:13],
    ]
    rnd = random.Random(17)
    for f in list(frames):
        frames += [f[:i] for i in range(len(f))]
        for _ in range(30):
            b = bytearray(f)
            b[rnd.randrange(len(b))] = rnd.randrange(256)
            frames.append(bytes(b))
    for i, f in enumerate(frames):
        _same(i + 1, 1.5 + i, f, P.LINK_ETHERNET, len(f) + 3)
        _same(i + 1, 1.5, f, P.LINK_RAW, len(f))  # another link type: the Python reference answers
    # addresses seen many times (the C side keeps the last two as text)
    for i in range(50):
        src = bytes([10, 0, i % 3, 1])
        f = _eth(_ip4(17, udp)[:12] + src + bytes([10, 0, 0, i % 5]) + _ip4(17, udp)[20:])
        _same(i, 0.0, f, P.LINK_ETHERNET, len(f))
    _same(1, 0.0, memoryview(frames[0]), P.LINK_ETHERNET, 0)


def test_pure_environment_variable_turns_it_off() -> None:
    import os
    import subprocess
    import sys

    code = "from godot_dissect.pcap import packets; print(packets.fast_parse is None)"
    env = {**os.environ, "GODOT_DISSECT_PURE": "1", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True"]


def test_a_segment_class_that_only_its_init_makes_is_called() -> None:
    """The compiled parse stores a Segment's fields in its slots (what its dataclass ``__init__`` does); a
    class whose ``__init__`` does more (here a ``__post_init__``) or that has no slots is called instead,
    and gives the same fields, on every frame of the engine's TCP capture."""
    import dataclasses

    from godot_dissect.pcap._packets import Parser

    made = []

    @dataclasses.dataclass
    class Noted:  # no slots, and a __post_init__
        frame: int
        time: float
        proto: str
        src: str
        sport: int
        dst: str
        dport: int
        payload: bytes
        seq: int = 0
        flags: int = 0
        frame_len: int = 0

        def __post_init__(self) -> None:
            made.append(self.frame)

    parse = Parser(Noted, P._parse, P.LINK_ETHERNET)
    link, pkts = open_packets(str(ROOT / "captures" / "godot3-tcp-stream.pcapng"))
    n = 0
    for frame, (ts, buf, orig, link) in enumerate(pkts, 1):
        got, want = parse(frame, ts, bytes(buf), link, orig), P._parse(frame, ts, bytes(buf), link, orig)
        assert (got is None) == (want is None)
        if got is not None:
            assert dataclasses.astuple(got) == dataclasses.astuple(want)
            n += 1
    assert n > 100 and len(made) == n
