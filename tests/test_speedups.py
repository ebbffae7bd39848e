"""The compiled hot path (``codec/_speedups.c`` driven by ``codec/fast.py``) agrees with the
pure-Python codec: same values (same classes, same float bits, same wire-width markers), same
bytes, same errors. The C code may bail out (return None) at any time; it must never return
something the pure path would not, and it must not bail on the common shapes it exists for."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from godot_dissect import DecodeError, decode, decode_prefix, encode
from godot_dissect import values as V
from godot_dissect.codec import fast
from godot_dissect.errors import EncodeError
from godot_dissect.fuzz.malformed import malformed_corpus
from godot_dissect.spec import DIALECT_NAMES, get_dialect

from .strategies import values

ROOT = Path(__file__).resolve().parent.parent


def _have_compiler() -> bool:
    cc = (sysconfig.get_config_var("CC") or "").split()
    headers = Path(sysconfig.get_paths()["include"], "Python.h")
    return bool(cc) and shutil.which(cc[0]) is not None and headers.exists()


def test_extension_is_built_when_a_compiler_is_present() -> None:
    if not _have_compiler():
        pytest.skip("no C compiler or Python headers: the pure codec is the only path")
    assert fast.BUILT, "pip install -e . should have built godot_dissect.codec._speedups"


def test_pure_environment_variable_turns_the_fast_path_off() -> None:
    code = "from godot_dissect.codec import fast; print(fast.fast_decode_prefix is None, fast.fast_encode is None)"
    env = {**os.environ, "GODOT_DISSECT_PURE": "1", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True"]


pytestmark_built = pytest.mark.skipif(not fast.BUILT, reason="the _speedups extension is not built")


@contextmanager
def pure_only() -> Iterator[None]:
    """Run the public codec entry points on the pure-Python path."""
    saved = fast.fast_decode_prefix, fast.fast_encode
    fast.fast_decode_prefix = fast.fast_encode = None
    try:
        yield
    finally:
        fast.fast_decode_prefix, fast.fast_encode = saved


@contextmanager
def fast_on() -> Iterator[None]:
    """Run the public codec entry points with the compiled path tried first (even if
    GODOT_DISSECT_PURE turned it off for this process)."""
    saved = fast.fast_decode_prefix, fast.fast_encode
    fast.fast_decode_prefix, fast.fast_encode = fast.c_decode_prefix, fast.c_encode
    try:
        yield
    finally:
        fast.fast_decode_prefix, fast.fast_encode = saved


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


def identical(a: Any, b: Any) -> bool:
    """Same classes all the way down, floats bit for bit, dicts in the same order (no recursion:
    some test values are thousands of levels deep)."""
    todo = [(a, b)]
    while todo:
        x, y = todo.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, float):
            if _bits(x) != _bits(y):
                return False
        elif isinstance(x, V.PackedArray):
            if (x.array.typecode, x.array.tobytes()) != (y.array.typecode, y.array.tobytes()):
                return False
        elif isinstance(x, (list, tuple)):
            if len(x) != len(y) or (isinstance(x, V.TypedArray) and x.element != y.element):
                return False
            todo += zip(x, y, strict=True)
        elif isinstance(x, (dict, V.FrozenDict)):
            if len(x) != len(y):
                return False
            if isinstance(x, V.TypedDictionary) and (x.key_type, x.value_type) != (y.key_type, y.value_type):
                return False
            todo += zip(x.keys(), y.keys(), strict=True)
            todo += zip(x.values(), y.values(), strict=True)
        elif isinstance(x, V.Object):
            if x.class_name != y.class_name:
                return False
            todo.append((x.properties, y.properties))
        elif x != y:
            return False
    return True


def _decode_outcome(data: Any, dialect: str, allow: bool = False, **kw: Any) -> tuple:
    try:
        v, n = decode_prefix(data, dialect, allow_objects=allow, **kw)
    except DecodeError as e:
        return ("error", e.offset, e.reason, e.path, e.code)
    return ("ok", v, n)


def _same_outcome(a: tuple, b: tuple) -> bool:
    if a[0] != b[0]:
        return False
    return a == b if a[0] == "error" else identical(a[1], b[1]) and a[2] == b[2]


def check_decode(data: Any, dialect: str, allow: bool = False, max_depth: int = 1024, offset: int = 0,
                 end: int | None = None) -> Any:
    """Fast and pure agree; returns the C result (None when it bailed)."""
    kw = {"max_depth": max_depth, "offset": offset, "end": end}
    with pure_only():
        pure = _decode_outcome(data, dialect, allow, **kw)
    with fast_on():
        public = _decode_outcome(data, dialect, allow, **kw)
    assert _same_outcome(public, pure), (public, pure)
    c = fast.c_decode_prefix(data, dialect, allow, max_depth, offset, end)
    if c is not None:  # the C path never answers where Python fails, and answers the same
        assert pure[0] == "ok", (c, pure)
        assert identical(c[0], pure[1]) and c[1] == pure[2], (c, pure)
    return c


def _encode_outcome(v: Any, dialect: str) -> tuple:
    try:
        return ("ok", encode(v, dialect, max_depth=None))  # the two encoders, at any depth
    except (EncodeError, OverflowError, struct.error) as e:
        return ("error", type(e), str(e))


def check_encode(v: Any, dialect: str) -> bytes | None:
    with pure_only():
        pure = _encode_outcome(v, dialect)
    with fast_on():
        public = _encode_outcome(v, dialect)
    assert public == pure
    c = fast.c_encode(v, dialect)
    if c is not None:
        assert pure == ("ok", c)
    return c


def needs_python(v: Any, dialect: str) -> bool:
    """Values the compiled path leaves to Python on purpose (see the top of _speedups.c)."""
    if isinstance(v, (V.NodePath, V.Signal, V.TypedArray, V.TypedDictionary, V.Object, V.FrozenDict)):
        return True
    if isinstance(v, V.PackedFloat32Array) and dialect == "godot3-double":
        return True  # PoolRealArray with its 8-byte stride
    if isinstance(v, dict):
        return any(needs_python(k, dialect) or needs_python(x, dialect) for k, x in v.items())
    if isinstance(v, list):
        return any(needs_python(x, dialect) for x in v)
    return False


# ---- generated values: both paths give the same bytes and the same values back -----------------

@pytestmark_built
@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_values_round_trip_identically(dialect: str) -> None:
    @given(values(dialect))
    def check(v: Any) -> None:
        data = check_encode(v, dialect)
        with pure_only():
            pure_bytes = encode(v, dialect)
        c = check_decode(pure_bytes, dialect)
        if not needs_python(v, dialect):
            assert data is not None, "the encoder bailed on a common value"
            assert c is not None, "the decoder bailed on a common value"
        check_decode(pure_bytes, dialect, allow=True)

    check()


@pytestmark_built
@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_values_with_offset_end_and_buffer_types(dialect: str) -> None:
    @given(values(dialect), st.binary(max_size=6), st.binary(max_size=6))
    def check(v: Any, before: bytes, after: bytes) -> None:
        with pure_only():
            body = encode(v, dialect)
        data = before + body + after
        check_decode(data, dialect, offset=len(before))
        check_decode(data, dialect, offset=len(before), end=len(before) + len(body))
        check_decode(data, dialect, offset=len(before), end=len(before) + len(body) - 1)
        check_decode(bytearray(data), dialect, offset=len(before))
        check_decode(memoryview(data), dialect, offset=len(before))
        check_decode(memoryview(data)[len(before):], dialect)

    check()


# ---- bytes that are not (all) valid: same value or the same error ------------------------------

@pytestmark_built
@pytest.mark.parametrize("dialect", DIALECT_NAMES)
@given(data=st.binary(max_size=96), allow=st.booleans())
def test_random_bytes_agree(dialect: str, data: bytes, allow: bool) -> None:
    check_decode(data, dialect, allow)


@pytestmark_built
@given(tail=st.binary(min_size=4, max_size=64), type_id=st.integers(0, 255), flags=st.integers(0, 255))
def test_headers_with_any_flags_agree(tail: bytes, type_id: int, flags: int) -> None:
    for dialect in DIALECT_NAMES:
        check_decode(bytes([type_id, 0, flags, 0]) + tail, dialect, True)


@st.composite
def mutated(draw: st.DrawFn, dialect: str) -> bytes:
    v = draw(values(dialect))
    with pure_only():
        data = bytearray(encode(v, dialect))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "set", "cut", "insert", "delete"]))
        i = draw(st.integers(0, max(len(data) - 1, 0)))
        if op == "flip" and data:
            data[i] ^= 1 << draw(st.integers(0, 7))
        elif op == "set" and data:
            data[i] = draw(st.sampled_from([0, 0x7F, 0x80, 0xFF, draw(st.integers(0, 255))]))
        elif op == "cut":
            del data[i:]
        elif op == "insert":
            data[i:i] = draw(st.binary(min_size=1, max_size=8))
        elif op == "delete" and data:
            del data[i:i + draw(st.integers(1, 8))]
    return bytes(data)


@pytestmark_built
@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_mutated_values_agree(dialect: str) -> None:
    @given(mutated(dialect), st.booleans())
    def check(data: bytes, allow: bool) -> None:
        check_decode(data, dialect, allow)

    check()


@pytestmark_built
@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_malformed_corpus_agrees(dialect: str) -> None:
    answered = 0
    corpus = malformed_corpus(dialect)
    for m in corpus:
        answered += check_decode(m.data, dialect, m.allow_objects) is not None
        for holder in ([1, None], {"k": None}):  # the same bytes as the last element of a container
            with pure_only():
                prefix = encode(holder, dialect)[:-4]  # drop the trailing null
            check_decode(prefix + m.data, dialect, m.allow_objects)
    assert answered > len(corpus) // 10  # the valid mutants, at least, took the fast path


# ---- specific shapes ---------------------------------------------------------------------------

@pytestmark_built
@pytest.mark.parametrize("dialect", ["godot3", "godot4", "godot4-double"])
def test_width_markers_and_special_floats(dialect: str) -> None:
    nan32 = struct.unpack("<f", struct.pack("<I", 0x7FC00001))[0]
    cases = [
        1, -(2**31), 2**31 - 1, 2**31, -(2**31) - 1, 2**63 - 1, -(2**63), V.WideInt(5), V.WideInt(-(2**31)),
        0.5, 0.1, float("inf"), float("-inf"), float("nan"), -0.0, V.Float64(0.5), V.Float64(float("inf")),
        V.Float32(float("nan")), V.Float32(nan32), V.Float32(0.1), True, False, None, "", "é\u2603\U0001f600",
        V.StringName("hp"), V.Vector3(1.0, float("nan"), -0.0), V.Vector2i(-1, 2**31 - 1),
        V.Transform3D(V.Basis(V.Vector3(1, 2, 3), V.Vector3(4, 5, 6), V.Vector3(7, 8, 9)), V.Vector3(10, 11, 12)),
        V.Color(0.25, 0.5, 0.75, 1.0), b"", b"abcde", bytearray(b"xy"), V.PackedStringArray(["", "a", "é"]),
        V.PackedFloat32Array([1.5, float("nan")]), V.PackedInt64Array([-(2**63)]), V.PackedFloat64Array([0.1]),
        V.PackedVector3Array([V.Vector3(1, 2, 3)]), V.PackedColorArray([V.Color()]), V.RID(7), V.ObjectID(2**64 - 1),
        V.Callable(), (1, 2), [[], {}], {1: 2, "a": [1]},
    ]
    d = get_dialect(dialect)
    for v in cases:
        key = V.type_key(v)
        check_encode(v, dialect)
        if d.by_key(key) is None:
            continue
        with pure_only():
            data = encode(v, dialect)
        check_decode(data, dialect)
    check_encode([2**64], dialect)  # EncodeError on both paths
    check_encode(V.Float32(1e300), dialect)  # OverflowError on both paths
    check_encode(object(), dialect)


@pytestmark_built
def test_wide_flag_packed_arrays_and_narrowing_re_encode() -> None:
    d = get_dialect("godot4")
    tid = d.by_key("PACKED_VECTOR2_ARRAY").id  # type: ignore[union-attr]
    data = struct.pack("<II4d", tid | 1 << 16, 2, 1.0, 2.0, 0.1, 1e300)
    # a single-precision build rounds 64-bit elements to float32 (1e300 -> inf): C hands that over
    assert check_decode(data, "godot4") is None
    v = decode(data, "godot4")
    assert v.array.typecode == "f" and list(v.array)[3] == float("inf")
    v = check_decode(data, "godot4-double")[0]
    assert v.array.typecode == "d"
    check_encode(v, "godot4")  # narrowing d -> f: bails, Python writes it (inf for 1e300)
    check_encode(v, "godot4-double")
    check_encode(V.PackedVector2Array([V.Vector2(1, 2)]), "godot4-double")  # f -> d widening in C


@pytestmark_built
def test_dictionary_keys_are_frozen_like_the_pure_path() -> None:
    with pure_only():
        inner_list, inner_dict = encode([1, [2]], "godot4"), encode({"a": [3]}, "godot4")
        hdr = encode({}, "godot4")[:4]
        value = encode(None, "godot4")
    data = hdr + struct.pack("<I", 2) + inner_list + value + inner_dict + value
    v = check_decode(data, "godot4")[0]
    assert list(v) == [(1, (2,)), V.FrozenDict({"a": (3,)})]
    # a repeated key: the first key object stays, the last value wins (as in the engine); keys Python takes as
    # equal and Godot does not (1 and true) cannot both be held: the C path hands both to Python, which refuses
    # (tests/test_hostile_review10_codec.py)
    with pure_only():
        one, true, two, three = (encode(x, "godot4") for x in (1, True, 2, 3))
    v = check_decode(hdr + struct.pack("<I", 2) + one + two + one + three, "godot4")
    assert v is None
    with pure_only():
        assert decode(hdr + struct.pack("<I", 2) + one + two + one + three, "godot4") == {1: 3}
    assert check_decode(hdr + struct.pack("<I", 2) + one + two + true + three, "godot4") is None


@pytestmark_built
@pytest.mark.parametrize("dialect", ["godot3", "godot4"])
def test_depth_limits_agree(dialect: str) -> None:
    array_id = get_dialect(dialect).by_key("ARRAY").id  # type: ignore[union-attr]
    level = bytes([array_id, 0, 0, 0, 1, 0, 0, 0])
    for depth in (0, 1, 5, 1023, 1024, 1025):
        data = level * depth + bytes(4)
        for max_depth in (0, 3, 1024, -1):
            check_decode(data, dialect, max_depth=max_depth)
    deep = check_decode(level * 3000 + bytes(4), dialect, max_depth=5000)
    assert deep is not None  # an explicit stack, no recursion limit


@pytestmark_built
def test_huge_counts_fail_fast_without_allocating() -> None:
    import tracemalloc

    for dialect in ("godot3", "godot4"):
        d = get_dialect(dialect)
        for key in ("ARRAY", "DICTIONARY", "PACKED_STRING_ARRAY", "PACKED_BYTE_ARRAY", "PACKED_FLOAT32_ARRAY"):
            data = struct.pack("<II", d.by_key(key).id, 0x7FFFFFFF) + bytes(64)  # type: ignore[union-attr]
            tracemalloc.start()
            try:
                assert fast.c_decode_prefix(data, dialect, False, 1024, 0, None) is None
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
            assert peak < 20_000


@pytestmark_built
def test_deep_and_big_values_encode_identically() -> None:
    v: list = []
    for _ in range(100_000):
        v = [v]
    assert check_encode(v, "godot4") is not None
    big = {"k": V.PackedFloat32Array(float(i) for i in range(300_000)), "s": ["x" * 1000] * 300}
    assert check_encode(big, "godot4") is not None
    assert check_decode(encode(big, "godot4"), "godot4") is not None


# ---- the front door, int runs, untracked math values, the paused collector (issue 17) ----------

_INT_EDGES = [0, 1, -1, 2**30 - 1, 2**30, -(2**30), 2**31 - 1, -(2**31), 2**31, -(2**31) - 1, 2**60, -(2**60),
              2**62, 2**63 - 1, -(2**63)]


@pytestmark_built
@pytest.mark.parametrize("dialect", ["godot3", "godot4"])
def test_int_runs_match_the_pure_codec(dialect: str) -> None:
    """Arrays of ints take the C runs (encode and decode); every width edge, and the items that leave
    the run (bool, WideInt, a too-big int, a float) come out as the pure codec has them."""
    cases = [_INT_EDGES * 3, [*_INT_EDGES, True, 5, V.WideInt(7), 9, 1.5, 4], [3, 4, 2**64], [1] * 1000,
             [[1, 2, 3], [4, 2**40], []]]
    for value in cases:
        with pure_only():
            try:
                want = encode(value, dialect)
            except EncodeError:
                want = None
        if want is None:
            with fast_on(), pytest.raises(EncodeError):
                encode(value, dialect)
            continue
        with fast_on():
            assert fast.c_encode(value, dialect) == want
            got = decode(want, dialect)
        with pure_only():
            assert identical(got, decode(want, dialect))


@pytestmark_built
def test_front_door_is_decode_and_follows_the_switch() -> None:
    """decode() is one C call while the C path is on; every call shape gives what the Python decode
    gives, errors included, and turning the path off (as pure_only does) reaches the pure codec."""
    import inspect
    import pickle

    from godot_dissect.codec import decoder

    assert decode is decoder.decode and inspect.signature(decode).parameters["dialect"].default == "godot4"
    assert pickle.loads(pickle.dumps(decode)) is decode  # e.g. sent to Dask workers
    data = encode({"a": [1, 2**40, 1.5], "b": V.Vector3(1.0, 2.0, 3.0), "c": V.NodePath("a/b")}, "godot3")
    calls = [((data, "godot3"), {}), ((data,), {"dialect": "godot3"}), ((data, "godot3"), {"max_depth": 1}),
             ((data, "godot3"), {"allow_objects": True}), ((memoryview(data), "godot3"), {}),
             ((bytearray(data), "godot3"), {}), ((data[:10], "godot3"), {}), ((data, "nope"), {}),
             ((data, "godot3"), {"bogus": 1}), ((), {}), ((data, "godot3", 3), {})]
    for args, kw in calls:
        results = []
        for mode in (fast_on, pure_only):
            with mode():
                try:
                    results.append(("ok", decode(*args, **kw)))
                except Exception as e:  # noqa: BLE001 - the same error class and text on both paths
                    results.append((type(e), str(e)))
        assert results[0][0] == results[1][0], (args, kw, results)
        if results[0][0] == "ok":
            assert identical(results[0][1], results[1][1])
        else:
            assert results[0] == results[1]


@pytestmark_built
def test_math_values_are_untracked_and_collector_state_is_kept() -> None:
    """Decoded math values (immutable, float leaves) are not walked by the collector; a big decode
    pauses the collector and gives it back as it was; cycles users build later are still found."""
    import gc
    import weakref

    value = [{"pos": V.Vector3(float(i), 2.0, 3.0), "tags": ["x"]} for i in range(2000)]
    data = encode(value, "godot3")
    assert len(data) > 4096
    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        try:
            with fast_on():
                got = decode(data, "godot3")
            assert gc.isenabled() is enabled
        finally:
            gc.enable()
    assert got == value and not gc.is_tracked(got[0]["pos"]) and gc.is_tracked(got[0]["tags"])

    class Ref:  # a cycle through a decoded list and dict: the collector must still free it
        pass

    r = Ref()
    got[0]["tags"].append(got[0])
    got[0]["me"] = r
    r.back = got  # type: ignore[attr-defined]
    alive = weakref.ref(r)
    del got, r
    gc.collect()
    assert alive() is None
