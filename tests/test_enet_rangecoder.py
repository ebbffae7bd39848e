"""ENet's range coder: the compiled decompressor (``enet/_rangecoder.c``) against the pure port it is made
from (``enet/rangecoder.py``, itself checked against Godot's real compressed traffic in
test_enet_compressed.py): the same bytes or the same error at the same offset, on every compressed body of the
real capture (whole, cut, with a small output limit, one byte changed) and on random inputs."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from godot_dissect.enet import rangecoder
from godot_dissect.enet.compression import compress
from godot_dissect.pcap.packets import segments
from godot_dissect.spec import enet as spec

ROOT = Path(__file__).resolve().parents[1]
PCAP = ROOT / "captures" / "godot3-enet-compressed.pcapng"
compiled = pytest.mark.skipif(rangecoder._rangecoder is None, reason="the compiled range coder is not built")


def _bodies() -> list[bytes]:
    """The compressed bodies of the capture's datagrams (the header's compressed flag set)."""
    out = []
    for s in segments(str(PCAP)):
        if s.proto != "udp" or len(s.payload) < 4:
            continue
        word = struct.unpack_from(">H", s.payload)[0]
        if (word >> spec.FLAG_COMPRESSED.shift) & 1:
            out.append(s.payload[4 if (word >> spec.FLAG_SENT_TIME.shift) & 1 else 2:])
    return out


def _outcome(fn, data: bytes, limit: int) -> tuple:  # noqa: ANN001 - a decompressor
    try:
        return ("ok", fn(data, limit))
    except rangecoder.RangeCoderError as e:
        return ("error", e.offset, e.reason)


def _compiled(data: bytes, limit: int) -> bytes:
    out = rangecoder._rangecoder.decompress(data, limit)
    if type(out) is tuple:
        raise rangecoder.RangeCoderError(*out)
    return out


def _same(data: bytes, limit: int = spec.MAX_MTU) -> tuple:
    pure = _outcome(rangecoder.decompress_pure, data, limit)
    assert _outcome(_compiled, data, limit) == pure, (data.hex(), limit)
    return pure


@compiled
def test_real_compressed_bodies_decode_alike() -> None:
    bodies = _bodies()
    assert len(bodies) >= 40
    good = [b for b in bodies if _same(b)[0] == "ok"]
    assert len(good) >= 20  # (the capture also holds datagrams of other hosts' codecs: errors, alike too)
    for b in good:
        _same(b, 16)  # past the output limit
        for cut in (1, len(b) // 2, len(b) - 1):
            _same(b[:cut])
        for i in range(0, len(b), 7):
            _same(b[:i] + bytes([b[i] ^ 0x5A]) + b[i + 1:])


@compiled
@given(st.binary(min_size=0, max_size=300), st.integers(min_value=0, max_value=spec.MAX_MTU))
def test_random_inputs_decode_alike(data: bytes, limit: int) -> None:
    _same(data, limit)


@compiled
@given(st.binary(min_size=1, max_size=spec.MAX_MTU))
def test_round_trips_decode_alike(raw: bytes) -> None:
    assert _same(compress(raw, "range_coder")) == ("ok", raw)
