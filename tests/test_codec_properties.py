"""Properties of the codec that hold for any input: round trips, and bad bytes only ever raise
DecodeError (never another exception, a hang, a recursion error or a huge allocation)."""

from __future__ import annotations

import contextlib
import time
import tracemalloc

import pytest
from hypothesis import given
from hypothesis import strategies as st

from godot_dissect import DecodeError, decode, decode_prefix, encode
from godot_dissect.errors import EncodeError
from godot_dissect.spec import DIALECT_NAMES, get_dialect

from .strategies import values
from .test_codec_engine import same


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_round_trip(dialect: str) -> None:
    @given(values(dialect))
    def check(v: object) -> None:
        data = encode(v, dialect)
        back, used = decode_prefix(data, dialect)
        assert used == len(data)
        assert same(back, v)
        assert encode(back, dialect) == data

    check()


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
@given(data=st.binary(max_size=96), allow=st.booleans())
def test_random_bytes_only_raise_decode_error(dialect: str, data: bytes, allow: bool) -> None:
    try:
        decode(data, dialect, allow_objects=allow)
    except DecodeError as e:
        assert 0 <= e.offset <= len(data)


@given(st.binary(min_size=4, max_size=64), st.integers(0, 255))
def test_mutated_valid_values_only_raise_decode_error(tail: bytes, type_id: int) -> None:
    for dialect in ("godot3", "godot4"):
        with contextlib.suppress(DecodeError):
            decode(bytes([type_id, 0, 0, 0]) + tail, dialect, allow_objects=True)


@pytest.mark.parametrize("dialect", ["godot3", "godot4"])
def test_million_deep_array_is_a_clear_error_fast(dialect: str) -> None:
    array_id = get_dialect(dialect).by_key("ARRAY").id  # type: ignore[union-attr]
    data = bytes([array_id, 0, 0, 0, 1, 0, 0, 0]) * 1_000_000
    t0 = time.perf_counter()
    with pytest.raises(DecodeError) as e:
        decode(data, dialect)
    assert time.perf_counter() - t0 < 1.0
    assert "deeper than 1024" in e.value.reason
    assert e.value.offset == 1025 * 8
    assert len(str(e.value)) < 400  # the path is abbreviated, not 1025 "[0]"s


def test_depth_limit_matches_the_engine_rule() -> None:
    # Godot fails when a Variant sits at depth > 1024 (top level is depth 0)
    ok = bytes.fromhex("1c00000001000000") * 1024 + bytes.fromhex("00000000")
    decode(ok, "godot4")
    with pytest.raises(DecodeError):
        decode(bytes.fromhex("1c00000001000000") * 1025 + bytes.fromhex("00000000"), "godot4")


@pytest.mark.parametrize("header", ["1c000000", "1b000000", "22000000", "1e000000", "1d000000", "16000000"])
def test_huge_counts_allocate_nothing(header: str) -> None:
    data = bytes.fromhex(header + "ffffff7f") + bytes(64)
    tracemalloc.start()
    try:
        with pytest.raises(DecodeError):
            decode(data, "godot4")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 200_000


def test_error_names_offset_path_and_reason() -> None:
    # [1, {"pos": "x" with a length running past the end}]
    good = encode([1, {"pos": "x"}], "godot4")
    bad = good[:-8] + bytes.fromhex("09000000") + good[-4:]
    with pytest.raises(DecodeError) as e:
        decode(bad, "godot4")
    assert e.value.path == "[1]['pos']"
    assert e.value.offset == len(bad) - 8
    assert "past the end" in e.value.reason


def test_deep_value_encodes_without_recursion() -> None:
    v: list = []
    for _ in range(200_000):
        v = [v]
    data = encode(v, "godot4", max_depth=None)  # past the engine's limit on purpose: the walker's own test
    assert len(data) == 200_000 * 8 + 8
    with pytest.raises(EncodeError, match="nested deeper than 1024 levels"):  # and the depth check's
        encode(v, "godot4")
