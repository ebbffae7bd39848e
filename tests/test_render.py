"""The compiled writers (``codec/_render.c``: ``fast.c_text``, ``fast.c_json``) agree with the pure
ones (``text/writer.py``, ``jsonform.py``), which ``test_text.py`` and ``test_captures.py`` prove
against Godot 3.2.3 and 4.6. The C code may bail out (return None) at any time; it must never
return a text the pure writer would not, and it must not bail on the shapes games send."""

from __future__ import annotations

import json
import math
import os
import struct
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from godot_dissect import jsonform
from godot_dissect import values as V
from godot_dissect.codec import fast
from godot_dissect.pcap.reader import read_pcap
from godot_dissect.records import LIST_KINDS
from godot_dissect.spec import DIALECT_NAMES, get_dialect
from godot_dissect.text import to_text
from godot_dissect.text.writer import compiled_writer, f32, to_text_start, writer

from .strategies import i64, leaves, text, values

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = sorted((ROOT / "captures").glob("*.pcapng"))

built = pytest.mark.skipif(not fast.BUILT, reason="the _speedups extension is not built")


@contextmanager
def pure_only() -> Iterator[None]:
    names = ("fast_text", "fast_json", "fast_json_line", "fast_json_record", "fast_text_start", "fast_text_writer")
    saved = [getattr(fast, n) for n in names]
    for n in names:
        setattr(fast, n, None)
    try:
        yield
    finally:
        for n, v in zip(names, saved, strict=True):
            setattr(fast, n, v)


def pure_text(v: Any, dialect: str) -> tuple:
    try:
        return ("ok", writer(dialect).write(v))
    except Exception as e:  # noqa: BLE001 - the outcome, whatever it is, is what C must not contradict
        return ("error", type(e))


def pure_json(v: Any) -> tuple:
    try:
        return ("ok", jsonform.escape_surrogates(json.dumps(jsonform.to_json(v), ensure_ascii=False)))
    except Exception as e:  # noqa: BLE001
        return ("error", type(e))


def check_text(v: Any, dialect: str) -> str | None:
    """C and pure agree (C may bail); the public to_text gives the pure result. Returns C's text."""
    pure = pure_text(v, dialect)
    c = fast.c_text(v, get_dialect(dialect), compiled_writer)
    if c is not None:
        assert pure == ("ok", c), (v, c, pure)
    if pure[0] == "ok":
        assert to_text(v, dialect) == pure[1]
    return c


def check_json(v: Any) -> str | None:
    pure = pure_json(v)
    c = fast.c_json(v, jsonform.c_tables)
    if c is not None:
        assert pure == ("ok", c), (v, c, pure)
    if pure[0] == "ok":
        assert jsonform.dumps(v) == pure[1]
    return c


def text_needs_python(v: Any, dialect: str) -> bool:
    """Values the compiled text writer leaves to Python on purpose (see the top of _render.c)."""
    d = get_dialect(dialect)
    if isinstance(v, (V.NodePath, V.TypedArray, V.TypedDictionary, V.FrozenDict, V.Object)):
        return True
    if isinstance(v, V.ObjectID) and v.id != 0:
        return True
    try:
        if d.by_key(V.type_key(v)) is None:
            return True  # the pure writer raises
    except TypeError:
        return True
    if isinstance(v, dict):
        return any(text_needs_python(k, dialect) or text_needs_python(x, dialect)
                   or not isinstance(k, (type(None), bool, int, float, str)) or k != k for k, x in v.items())
    if isinstance(v, (list, tuple)) and not hasattr(v, "_fields") and not isinstance(v, V.PackedStringArray):
        return any(text_needs_python(x, dialect) for x in v)
    return False


def json_needs_python(v: Any) -> bool:
    if isinstance(v, (V.NodePath, V.TypedArray, V.TypedDictionary, V.FrozenDict, V.Object, V.Signal)):
        return True
    if isinstance(v, dict):
        return any(json_needs_python(k) or json_needs_python(x) for k, x in v.items())
    if isinstance(v, (list, tuple)) and not hasattr(v, "_fields") and not isinstance(v, V.PackedStringArray):
        return any(json_needs_python(x) for x in v)
    return False


def test_pure_environment_variable_turns_the_writers_off() -> None:
    code = ("from godot_dissect.codec import fast\n"
            "print(fast.fast_text is None, fast.fast_json is None, fast.fast_json_line is None)")
    env = {**os.environ, "GODOT_DISSECT_PURE": "1", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True", "True"]


# ---- generated values ------------------------------------------------------------------------

@built
@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_values_render_identically(dialect: str) -> None:
    @settings(max_examples=600)
    @given(values(dialect))
    def check(v: Any) -> None:
        c = check_text(v, dialect)
        if not text_needs_python(v, dialect):
            assert c is not None, "the text writer bailed on a common value"
        j = check_json(v)
        if not json_needs_python(v):
            assert j is not None, "the JSON writer bailed on a common value"

    check()


@built
@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_leaves_render_identically(dialect: str) -> None:
    @settings(max_examples=600)
    @given(leaves(dialect))
    def check(v: Any) -> None:
        check_text(v, dialect)
        check_json(v)

    check()


def _double(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def _single(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


#: any double (every bit pattern: subnormals, NaN payloads, both zeros), biased to the edges
any_double = st.one_of(st.integers(0, 2**64 - 1).map(_double), st.floats(), st.floats(-1e7, 1e7),
                       st.integers(-(10**7), 10**7).map(float),
                       st.integers(-(2**53), 2**53).map(float), st.integers(0, 20).map(lambda n: 10.0**n),
                       st.integers(1, 20).map(lambda n: 10.0**-n))
any_single = st.one_of(st.integers(0, 2**32 - 1).map(_single), st.floats(width=32),
                       st.integers(-(10**7), 10**7).map(lambda n: f32(n / 64)))


@built
@settings(max_examples=3000)
@given(any_double)
def test_floats_format_identically_in_every_dialect(x: float) -> None:
    """Godot 3 "%g" after the float32 cast, Godot 4 Grisu2 with the float32 hack, json's repr."""
    for dialect in DIALECT_NAMES:
        for v in (x, V.Float64(x), V.Float32(x), [x], {"k": x}):
            assert check_text(v, dialect) is not None
    assert check_json(x) is not None and check_json([x, V.Float64(x), V.Float32(x)]) is not None


@built
@settings(max_examples=3000)
@given(any_single, any_single, any_double)
def test_components_format_identically_in_every_dialect(a: float, b: float, c: float) -> None:
    for dialect in DIALECT_NAMES:
        d = get_dialect(dialect)
        for v in (V.Vector2(a, b), V.Color(a, b, c, a), V.PackedFloat32Array([a, b]),
                  V.PackedVector2Array([V.Vector2(a, b)]), V.PackedFloat64Array([c, a]), V.Vector3(c, a, b)):
            if d.by_key(V.type_key(v)) is not None:
                assert check_text(v, dialect) is not None, v
            assert check_json(v) is not None


def _memo_slot(x: float) -> int:
    """The slot of x in the compiled writers' float memo (_render.c, FloatMemo: 1024 slots by the bits)."""
    bits = struct.unpack("<Q", struct.pack("<d", x))[0]
    return ((bits * 0x9E3779B97F4A7C15) & (2**64 - 1)) >> 54


@built
def test_floats_remembered_by_the_writers_stay_right() -> None:
    """The writers remember the text of each float they wrote (by its bits, one per slot): floats that share a
    slot, written in turn, each in full and cut short by a text start, read back as the pure writers write them."""
    by_slot: dict[int, list[float]] = {}
    for i in range(1, 20000):
        for x in (i / 7, -i / 7, f32(i / 7) * 1e-9, i * 1e21 / 3):
            by_slot.setdefault(_memo_slot(x), []).append(x)
    shared = [xs[:4] for xs in by_slot.values() if len(xs) >= 4][:50]
    assert len(shared) == 50
    for xs in shared:
        for _ in range(2):  # the second round finds each text remembered (or its slot taken by another)
            for x in xs + xs[::-1]:
                for dialect in DIALECT_NAMES:
                    assert check_text([x, V.Vector2(x, -x)], dialect) is not None
                    check_text_start([x, x, x], dialect)
                assert check_json([x, -x, x]) is not None


@built
@settings(max_examples=1000)
@given(i64, st.integers(-(2**80), 2**80))
def test_ints_render_identically(x: int, big: int) -> None:
    for dialect in ("godot3", "godot4"):
        assert check_text(x, dialect) is not None and check_text(V.WideInt(x), dialect) is not None
        check_text(big, dialect)  # beyond int64: the pure writer raises, C bails
        check_text(V.Vector2i(x, big), dialect)
    assert check_json(big) is not None and check_json([x, V.WideInt(big)]) is not None


_KEYS = st.one_of(st.none(), st.booleans(), i64, st.floats(allow_nan=False), text, text.map(V.StringName),
                  st.sampled_from([0, 1, -1, 0.0, 1.0, -0.5, "", "a", "b", V.StringName("a"), V.StringName("c")]))


@built
@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_dictionary_key_order(dialect: str) -> None:
    """Keys of mixed types in the engine's order (type id first; Godot 4 compares String and
    StringName as text); from 0 to 40 keys (the insertion sort and the merge sort)."""
    has_names = get_dialect(dialect).by_key("STRING_NAME") is not None

    @settings(max_examples=500)
    @given(st.dictionaries(_KEYS, st.integers(0, 9), max_size=40))
    def check(m: dict) -> None:
        c = check_text(m, dialect)
        if has_names or not any(type(k) is V.StringName for k in m):
            assert c is not None

    check()


_ANY_TEXT = st.text(max_size=20)  # surrogates and control characters included
_PLAIN = st.one_of(st.none(), st.booleans(), i64, st.integers(-(2**70), 2**70), st.floats(allow_nan=False,
                   allow_infinity=False), _ANY_TEXT)


@built
@settings(max_examples=1000)
@given(st.dictionaries(_ANY_TEXT, _PLAIN, max_size=15), st.one_of(st.none(), _ANY_TEXT), values("godot4"),
       st.one_of(st.none(), st.dictionaries(text, i64, max_size=2), st.lists(i64, max_size=2),
                 st.recursive(_PLAIN, lambda kids: st.lists(kids, max_size=3) | st.tuples(kids, kids)
                              | st.dictionaries(_ANY_TEXT, kids, max_size=3), max_leaves=12)))
def test_record_lines(head: dict, text_: str | None, value: Any, odd: Any) -> None:
    """A record's JSON line in one go = json.dumps of the whole record (record fields of any plain
    JSON type, any text); other field types are left to Python."""
    if odd is not None:
        head = {**head, "fields": odd}
    c = fast.c_json_line(head, text_, value, jsonform.c_tables)
    with pure_only():
        pure = jsonform.record_line(head, text_, value)
    full = head if text_ is None else {**head, "text": text_, "value": jsonform.to_json(value)}
    assert pure == jsonform.escape_surrogates(json.dumps(full, ensure_ascii=False))
    if c is not None:
        assert c == pure
    elif odd is None and text_ is not None and not json_needs_python(value):
        assert any(isinstance(s, str) and s.encode("utf-8", "surrogatepass").decode("utf-8", "ignore") != s
                   for s in [text_, *head, *head.values()]), "bailed on a plain record"


# ---- specific shapes ---------------------------------------------------------------------------

def _nest(depth: int, leaf: Any, wrap: Any) -> Any:
    v = leaf
    for _ in range(depth):
        v = wrap(v)
    return v


@built
@pytest.mark.parametrize("dialect", ["godot3", "godot4"])
def test_depth(dialect: str) -> None:
    """Godot 4 prints levels beyond 100 empty (C writes them); beyond the C limit Python writes."""
    for depth in (0, 1, 99, 100, 101, 102, 150, 255, 256, 257, 400):
        # (value, depth of its deepest leaf)
        for v, deepest in ((_nest(depth, [1], lambda x: [x]), depth + 1),
                           (_nest(depth, {"a": 1}, lambda x: {"k": x}), depth + 1),
                           (_nest(depth, V.ObjectID(0), lambda x: [x]), depth)):
            c = check_text(v, dialect)
            assert (c is not None) == (deepest <= 256 or dialect == "godot4"), depth
            # JSON: C writes what nests at most jsonform.VALUE_MAX_DEPTH JSON levels (less the 3 a
            # leaf may add), Python writes the flat form past it (check_json: C and Python agree)
            form = jsonform.to_json(v)
            levels = jsonform._json_depth(form) if type(form) in (list, dict) else 0
            if isinstance(form, dict) and form.get("type") == "Flat":
                assert check_json(v) is None and levels <= jsonform.VALUE_MAX_DEPTH
            elif levels + 3 <= jsonform.VALUE_MAX_DEPTH:
                assert check_json(v) is not None


@built
def test_odd_values_bail_or_agree() -> None:
    odd: list[Any] = [
        tuple.__new__(V.Vector2, (1, 2)), tuple.__new__(V.Vector2i, (1.5, 2)), tuple.__new__(V.Vector2, (True, 1.0)),
        tuple.__new__(V.Vector3, (1.0, 2.0)), V.Vector2i(2**70, 1), {math.nan: 1}, {(1, 2): 3, 1: 2},
        {1: 2, V.Vector2(1, 2): 3}, "\ud800", V.StringName("\udfff"), [V.ObjectID(5)], V.ObjectID(2**64),
        V.RID(-1), V.RID(2**64 + 5), V.PackedStringArray(["a", 1]), V.ResourceRef("SubResource", 2),
        V.PackedInt32Array([1, 2]), V.PackedVector2Array.from_bytes(b"\0" * 12),
        V.PackedFloat32Array.from_bytes(b"", "d"),
        V.PackedInt64Array([2**63 - 1, -(2**63)]), bytearray(b"\x00\xff"), memoryview(b"ab"), object(), 2**64,
        V.Signal("s\n", 5), V.Callable(), V.NodePath("/a/b:c"), V.Object("Node", {"name": "x"}),
        V.TypedArray(V.ContainerType("builtin", "int"), [1]), V.FrozenDict({"a": 1}),
        V.TypedDictionary(None, None, {"a": 1}), type("S", (str,), {})("sub"), type("I", (int,), {})(3),
        {"x": V.Float32(math.nan), "y": V.Float64(-math.inf), "\x00\x1f\x7f\"\\\n\t\b\f\r": "é😀"},
    ]
    for dialect in DIALECT_NAMES:
        for v in odd:
            check_text(v, dialect)
    for v in odd:
        check_json(v)


@pytest.mark.parametrize("name", ["godot3-udp-all-types", "godot4-websocket-put-var"])
def test_pure_path_without_the_extension(name: str) -> None:
    """With the writers off, to_text gives what the engine printed (var_to_str in the golden) for
    every value of a real capture, and dumps is the pure JSON writer."""
    root = ROOT / "captures"
    lines = map(json.loads, (root / f"{name}.golden.jsonl").read_text().splitlines())
    golden = {(g["flow"], g["index"]): g for g in lines if "text" in g and g.get("kind", "variant") == "variant"}
    index: dict[str, int] = {}
    checked = 0
    with pure_only():
        for r in read_pcap(str(root / f"{name}.pcapng")):
            flow = f"{r.transport} {r.src}:{r.sport} -> {r.dst}:{r.dport}"
            i = index[flow] = index.get(flow, -1) + 1
            g = golden.get((flow, i))
            if g is None or r.kind != "variant":
                continue
            assert to_text(r.value, r.dialect) == g["text"], (flow, i)
            assert jsonform.dumps(r.value) == json.dumps(jsonform.to_json(r.value), ensure_ascii=False)
            checked += 1
    assert checked == len(golden) > 10


# ---- real traffic ------------------------------------------------------------------------------

@built
@pytest.mark.parametrize("capture", CAPTURES, ids=[p.stem for p in CAPTURES])
def test_real_captures_render_identically(capture: Path) -> None:
    """Every message of the committed Godot 3.2.3 / 4.6 captures: C text and JSON = pure, and
    the JSON lines are the same with and without the compiled writers."""
    n = 0
    for rec in read_pcap(str(capture)):
        line = rec.to_jsonl()
        with pure_only():
            assert rec.to_jsonl() == line == jsonform.json_text(rec.to_json())
        if rec.kind in ("variant", "debugger"):
            shown = [rec.value]
        elif rec.kind in LIST_KINDS and rec.dialect:  # multiplayer: RPC arguments, sync states
            shown = list(rec.value or ())
        else:
            continue
        for v in shown:
            n += 1
            check_text_start(v, rec.dialect)
            c = check_text(v, rec.dialect)
            if not text_needs_python(v, rec.dialect):
                assert c is not None
            check_json(v)
    if n == 0:
        pytest.skip("no Variant value in this capture")


# ---- the start of a text (one-line summaries) ---------------------------------------------------

def check_text_start(v: Any, dialect: str) -> None:
    """``render_start`` gives the whole text (complete) or a start of it at least that many bytes long, and
    ``to_text_start`` what a summary needs: the text, or a start of it at least that long (for a value
    the dialect cannot write, the start may come out before the writer reaches what it cannot write)."""
    whole = pure_text(v, dialect)
    if whole[0] != "ok":  # a value with no text in this dialect: no start to check (a summary shows the start)
        return
    for nbytes in (1, 7, 64, 404, 4096):
        got = fast.c_text_start(v, get_dialect(dialect), compiled_writer, nbytes)
        if got is None:
            continue
        text_, complete = got
        if complete:
            assert text_ == whole[1]
        else:
            assert whole[1].startswith(text_) and len(text_.encode("utf-8", "surrogatepass")) >= nbytes
    for chars in (1, 40, 101):
        start = to_text_start(v, dialect, chars)
        assert whole[1].startswith(start) and (start == whole[1] or len(start) >= chars)


@built
@settings(max_examples=300, deadline=None)
@given(values(), st.sampled_from(DIALECT_NAMES))
def test_text_start_is_a_start_of_the_text(v: Any, dialect: str) -> None:
    check_text_start(v, dialect)


@built
@settings(max_examples=400, deadline=None)
@given(values(), st.sampled_from(DIALECT_NAMES), st.sampled_from(("c2s", "s2c")), st.one_of(st.none(), text),
       st.floats(0, 2e9), st.integers(1, 10**9), st.lists(st.text("ab\n", max_size=4), min_size=10, max_size=30))
def test_summary_line_is_the_text_line(v: Any, dialect: str, direction: str, message: str | None, t: float,
                                       frame: int, around_the_cut: list[str]) -> None:
    """``TextWriter.summary_line`` writes what ``read_cmds.text_line`` writes with the pure writers (or
    leaves the record to it): values of any shape, and Arrays of short strings with newlines whose
    text is around the cut at 100 characters."""
    from godot_dissect.cli.read_cmds import ARROWS, ENDS, SUMMARY_CHARS, text_line
    from godot_dissect.records import Record, compiled_text_writer

    for value in (v, around_the_cut):
        rec = Record(frame, t, "10.0.0.1", 4242, "10.0.0.2", 50000, "udp", direction, dialect,
                     "variant" if message is None else "debugger", value, b"", message=message)
        with pure_only():
            try:
                want = text_line(rec)
            except Exception:  # noqa: BLE001 - no text for this value in this dialect: nothing to compare
                continue
        got = compiled_text_writer(dialect).summary_line(rec, rec.type, SUMMARY_CHARS,
                                                         (ENDS, ARROWS["c2s"], ARROWS["s2c"]))
        if got is not None:
            assert got == want


_TIMES = st.one_of(st.floats(-1e12, 1e12, allow_nan=False), st.integers(0, 2 * 10**15).map(lambda n: n / 1e6),
                   st.integers(0, 2 * 10**15).map(lambda n: (n + 0.5) / 1e6),
                   st.integers(0, 10**12).map(lambda n: n / 1e3), st.integers(0, 10**12).map(lambda n: (n + 0.5) / 1e3),
                   st.integers(0, 2**40))


@built
@settings(max_examples=2000, deadline=None)
@given(_TIMES, _TIMES)
def test_record_rounds_time_and_wire_bytes_as_python(t: float, wire: float) -> None:
    """``JsonWriter.record`` writes ``round(time, 6)`` and ``round(wire_bytes, 3)`` as json.dumps does
    (its shortcut when the value already has that few decimals, halfway cases, big and negative values)."""
    from godot_dissect.records import Record

    rec = Record(1, t, "10.0.0.1", 1, "10.0.0.2", 2, "udp", "c2s", "godot4", "variant", 7, b"\x02\x00\x00\x00",
                 wire_bytes=wire)
    line = rec.to_jsonl()
    with pure_only():
        assert line == rec.to_jsonl()
    head = json.loads(line)
    assert head["time"] == round(t, 6) and head["wire_bytes"] == round(wire, 3)



@built
def test_record_writer_reads_only_its_own_class_slots() -> None:
    """A Record subclass whose ``frame`` is another class's slot (a member descriptor of a class whose
    slot sits inside a record, where another field is, or 32,000 bytes in, past the record's end):
    Python's getattr refuses it (TypeError) and so must the compiled record writer, which reads slots
    straight off the object: it leaves the record to Python instead of writing another field as the
    frame or reading past the end."""
    from godot_dissect.records import _OPTIONAL_HEAD, Record

    for other in (type("LikeRecord", (), {"__slots__": tuple(f"s{i}" for i in range(len(Record.__slots__) // 2))}),
                  type("ManySlots", (), {"__slots__": tuple(f"s{i}" for i in range(4000))})):
        foreign = type("Foreign", (Record,), {"__slots__": (), "frame": other.__dict__[other.__slots__[-1]]})
        rec = Record(1, 1.5, "10.0.0.1", 1, "10.0.0.2", 2, "udp", "c2s", "godot4", "variant", 7, b"\x02\x00\x00\x00")
        rec.__class__ = foreign  # (its __init__ would refuse the frame too)
        for _ in range(2):  # the second time from the writer's per-class slot table
            assert fast.c_json_record(rec, rec.type, "7", _OPTIONAL_HEAD, jsonform.c_tables) is None
            with pytest.raises(TypeError):
                rec.to_jsonl()
