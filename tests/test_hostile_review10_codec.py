"""Hostile review 10, the codec's area: hand-built inputs that made the codec lose data, hang or crash.

* The JSON form read back (``jsonform.loads``, ``godot-dissect encode --json``): a flat form whose nodes share
  a child (40 nodes of two references each are 2**40 elements to write), refer back (a cycle, read as null),
  JSON nested past Python's recursion limit, and forms with a field of the wrong kind: each a ValueError
  naming the reason, never a hang, RecursionError or traceback.
* Dictionary keys Python merges and Godot keeps apart (``true``, ``1`` and ``1.0``; ``[1]`` and ``[true]``):
  the engine's own ``{1: "evil", true: "benign"}`` was read as ``{1: "benign"}``, an entry silently gone. Python
  cannot hold both, so it is a DecodeError (TextParseError, ValueError) naming the second key and its offset,
  by both codec paths; a key repeated with its own type is still the engine's repeated key. NaN keys, which
  Python keeps apart (nan != nan) and the engine takes for one, are one key.
* Godot 4 typed containers whose type the engine does not keep: builtin Nil is no type (the engine's Array is
  untyped: ``[5]``; we printed ``Array[Nil]([5])``, which reads back as a class named Nil), a class name ""
  is the builtin Object (we printed ``Array[]([])``, which does not parse, and wrote the "" back). A typed Array
  used as a Dictionary key keeps its type (it was frozen into a plain tuple: ``{[1]: null}``, written back untyped).
* Hash flooding: Python hashes a tuple (a frozen Array key, a math value) from its items' hashes with no secret,
  and an int is its own hash, so a message can give every Array key of a Dictionary one hash: Python's dict then
  compares each key with all the earlier ones (8000 keys, 256 KB: 1.5 s; an 8 MB PDU: about half an hour). Past
  ``MAX_KEYS_OF_ONE_HASH`` keys of one hash in a Dictionary it is a DecodeError (TextParseError) at that key.
* The Godot 3 text of a Dictionary keyed by two-item Arrays: Godot 3's Array OP_LESS is no order (``[1, 2] <
  [2, 1]`` and ``[2, 1] < [1, 2]``), and the engine's sort, mirrored with bounds, then took time quadratic in the
  keys (4000 keys, 144 KB: 25 s; 8000 with ``(i % 7, -i)``: 2 minutes).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from godot_dissect import encode, jsonform
from godot_dissect.codec import decoder
from godot_dissect.codec import fast as _fast
from godot_dissect.codec.decoder import decode
from godot_dissect.errors import DecodeError
from godot_dissect.fuzz import hostile
from godot_dissect.spec import get_dialect
from godot_dissect.spec.transports import MAX_KEYS_OF_ONE_HASH
from godot_dissect.text import TextParseError, from_text, to_text
from godot_dissect.text.order import VariantOrder, godot_sort

ROOT = Path(__file__).resolve().parents[1]


def _cli(*args: str, stdin: bytes = b"", timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "godot_dissect", *args], input=stdin, capture_output=True, env=env,
                          timeout=timeout)


# --- the JSON form read back ------------------------------------------------------------------------

def _flat_nodes(depth: int) -> list:
    """The flat JSON form our writer gives a Godot 4 Dictionary nested ``depth`` levels ({1: {1: ... null}})."""
    data = json.loads(jsonform.dumps(decode(hostile.nested_dictionary(depth), "godot4")))
    assert data["type"] == "Flat" and len(data["nodes"]) == depth
    return data["nodes"]


def test_flat_form_as_written_reads_back() -> None:
    nodes = _flat_nodes(300)
    assert jsonform.from_json({"type": "Flat", "nodes": nodes}) == decode(hostile.nested_dictionary(300), "godot4")


def test_flat_form_whose_nodes_share_a_child_is_refused() -> None:
    """Each node refers to the next one twice: 300 small nodes would be 2**300 Dictionaries to encode."""
    nodes = _flat_nodes(300)
    for node in nodes[:-1]:
        (key, child), = node["items"]
        node["items"] = [[key, child], [2, dict(child)]]
    text = json.dumps({"type": "Flat", "nodes": nodes})
    with pytest.raises(ValueError, match="flat JSON form: node 298 refers to node 299"):
        jsonform.loads(text)
    r = _cli("encode", "--json", "-", stdin=text.encode())
    assert r.returncode == 1 and r.stderr.startswith(b"error: flat JSON form"), r.stderr[-300:]


@pytest.mark.parametrize("ref", [0, 1, 5, -1, 10**6, True, "2", None])
def test_flat_form_node_that_refers_back_or_outside_is_refused(ref: object) -> None:
    """A reference to itself, an earlier node (a cycle: it was read as null), no node or no number."""
    nodes = _flat_nodes(100)
    nodes[1]["items"][0][1] = {"node": ref}
    with pytest.raises(ValueError, match=r"flat JSON form: node 1 refers to node"):
        jsonform.from_json({"type": "Flat", "nodes": nodes})


@pytest.mark.parametrize("depth", [3_500, 11_000, 100_000])
def test_json_nested_past_the_engines_depth_is_a_value_error(depth: int) -> None:
    text = "[" * depth + "]" * depth
    with pytest.raises(ValueError, match=f"nested deeper than {jsonform.JSON_READ_MAX_DEPTH} levels"):
        jsonform.loads(text)
    r = _cli("encode", "--json", "-", stdin=text.encode())
    assert r.returncode == 1 and r.stderr.startswith(b"error: JSON"), r.stderr[-300:]


def test_json_at_the_engines_depth_still_reads() -> None:
    """1024 Godot 4 Dictionaries, values nested (3 JSON levels each): the deepest the engine decodes."""
    nested = {"type": "Dictionary", "items": []}
    for _ in range(1023):
        nested = {"type": "Dictionary", "items": [[1, nested]]}
    value = jsonform.from_json(nested)
    depth = 0
    while value:
        value, depth = value[1], depth + 1
    assert depth == 1023


@pytest.mark.parametrize("text", ['Object(Node,"a":' * 20_000 + "null" + ")" * 20_000,
                                  "{1: " * 20_000 + "null" + "}" * 20_000, "[" * 100_000 + "]" * 100_000],
                         ids=["objects", "dictionaries", "arrays"])
def test_json_form_of_a_value_read_from_text_at_any_depth(text: str) -> None:
    """The text notation reads values of any depth (only keys are bounded); their JSON form was a RecursionError
    past ~12000 frames: it is the flat form, which reads back to the same JSON."""
    value = from_text(text, "godot4")
    line = jsonform.dumps(value)
    assert json.loads(line)["type"] == "Flat"
    assert jsonform.dumps(jsonform.loads(line)) == line


@pytest.mark.parametrize("form", [
    {"foo": 1},
    {"type": "Vector2", "value": [1]},
    {"type": "NodePath", "names": [1], "subnames": [], "absolute": False},
    {"type": "Object", "class": "Node", "properties": [[1, 2]]},
    {"type": "PackedStringArray", "value": ["a", 1]},
    {"type": "StringName", "value": 5},
    {"type": "PackedInt32Array", "value": [2**40]},
    {"type": "PackedFloat32Array", "value": [[1]]},
    {"type": "Flat", "nodes": []},
    {"type": "Dictionary", "items": [[1]]},
], ids=lambda f: json.dumps(f)[:40])
def test_json_form_with_a_field_of_the_wrong_kind_is_a_value_error(form: dict) -> None:
    text = json.dumps(form)
    with pytest.raises(ValueError):
        jsonform.loads(text)
    r = _cli("encode", "--json", "-", stdin=text.encode())
    assert r.returncode == 1 and r.stderr.startswith(b"error: ") and b"Traceback" not in r.stderr, r.stderr[-300:]


# --- Dictionary keys Python takes for one another -----------------------------------------------------

#: (GDScript literal, what Godot 3.2.3's var2str printed, var2bytes printed by Godot 3.2.3, var_to_bytes printed by
#: Godot 4.6 (its web build), offset of the key Python merges with an earlier one)
ENGINE_KEYS = [
    ('{1: "evil", true: "benign"}', '{\ntrue: "benign",\n1: "evil"\n}',
     "1200000002000000020000000100000004000000040000006576696c0100000001000000040000000600000062656e69676e0000",
     "1b00000002000000020000000100000004000000040000006576696c0100000001000000040000000600000062656e69676e0000", 28),
    ('{true: "evil", 1: "benign"}', '{\ntrue: "evil",\n1: "benign"\n}',
     "1200000002000000010000000100000004000000040000006576696c0200000001000000040000000600000062656e69676e0000",
     "1b00000002000000010000000100000004000000040000006576696c0200000001000000040000000600000062656e69676e0000", 28),
    ('{1: "a", 1.0: "b"}', '{\n1: "a",\n1.0: "b"\n}',
     "12000000020000000200000001000000040000000100000061000000030000000000803f040000000100000062000000",
     "1b000000020000000200000001000000040000000100000061000000030000000000803f040000000100000062000000", 28),
    ('{0: "a", false: "b", 0.0: "c"}', '{\nfalse: "b",\n0: "a",\n0.0: "c"\n}',
     "1200000003000000020000000000000004000000010000006100000001000000000000000400000001000000620000000300000000000000"
     "040000000100000063000000",
     "1b00000003000000020000000000000004000000010000006100000001000000000000000400000001000000620000000300000000000000"
     "040000000100000063000000", 28),
    ('{[1]: "a", [true]: "b"}', '{\n[ 1 ]: "a",\n[ true ]: "b"\n}',
     "120000000200000013000000010000000200000001000000040000000100000061000000130000000100000001000000010000000400000001"
     "00000062000000",
     "1b000000020000001c0000000100000002000000010000000400000001000000610000001c0000000100000001000000010000000400000001"
     "00000062000000", 36),
]


@pytest.mark.parametrize("pure", [False, True], ids=["compiled", "pure"])
@pytest.mark.parametrize("case", ENGINE_KEYS, ids=[c[0] for c in ENGINE_KEYS])
def test_engine_keys_python_merges_are_an_error_not_a_lost_entry(case: tuple, pure: bool,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    source, _, g3, g4, offset = case
    if pure:
        monkeypatch.setattr(_fast, "fast_decode_prefix", None)
    for dialect, data in (("godot3", g3), ("godot4", g4)):
        with pytest.raises(DecodeError, match="cannot represent value: Dictionary key .* equals the earlier key") as e:
            decoder.decode_prefix(bytes.fromhex(data), dialect)
        assert e.value.offset == offset, (source, dialect, str(e.value))


@pytest.mark.parametrize("case", ENGINE_KEYS, ids=[c[0] for c in ENGINE_KEYS])
def test_engine_text_of_keys_python_merges_is_an_error(case: tuple) -> None:
    source, text, *_ = case
    with pytest.raises(TextParseError, match="cannot represent value: Dictionary key"):
        from_text(text, "godot3")
    with pytest.raises(ValueError, match="equals the earlier key"):
        jsonform.from_json({"type": "Dictionary", "items": [[True, 1], [1, 2]]})


#: Godot 4 typed Dictionaries {true: 10, 1: 20} / {1: 10, 1.0: 20} (hand-built) and what Godot 4.6 (its web build)
#: printed: a key type converts the keys first (one key), a value type alone leaves them apart (Python cannot)
TYPED_KEYS = [
    ("1b00010002000000020000000100000001000000020000000a00000002000000010000000200000014000000",
     "Dictionary[int, Variant]({\n1: 20\n})", "1b000100020000000100000002000000010000000200000014000000"),
    ("1b00010003000000020000000200000001000000020000000a000000030000000000803f0200000014000000",
     "Dictionary[float, Variant]({\n1.0: 20\n})", "1b0001000300000001000000030000000000803f0200000014000000"),
    ("1b00040002000000020000000100000001000000020000000a00000002000000010000000200000014000000",
     "Dictionary[Variant, int]({\ntrue: 10,\n1: 20\n})", None),
]


@pytest.mark.parametrize("case", TYPED_KEYS, ids=[c[1][:24] for c in TYPED_KEYS])
def test_typed_dictionary_keys_merge_as_the_engine_converts_them(case: tuple) -> None:
    data, text, engine = case
    if engine is None:
        with pytest.raises(DecodeError, match="cannot represent value: Dictionary key 1 equals the earlier key True"):
            decoder.decode_prefix(bytes.fromhex(data), "godot4")
        return
    value = decoder.decode_prefix(bytes.fromhex(data), "godot4")[0]
    assert to_text(value, "godot4") == text
    assert encode(value, "godot4").hex() == engine
    typed = text.split("(")[0]
    assert list(from_text(typed + "({true: 10, 1: 20})", "godot4").values()) == [20]


#: {1: 1, 1: 2} as bytes (hand-built: the engine never writes a key twice) and what the engines made of them:
#: var2str / var_to_str printed "{\n1: 2\n}" and re-encoded one pair (Godot 3.2.3 and 4.6 alike)
REPEATED = {"godot3": ("12000000020000000200000001000000020000000100000002000000010000000200000002000000",
                       "120000000100000002000000010000000200000002000000"),
            "godot4": ("1b000000020000000200000001000000020000000100000002000000010000000200000002000000",
                       "1b0000000100000002000000010000000200000002000000")}


@pytest.mark.parametrize("pure", [False, True], ids=["compiled", "pure"])
@pytest.mark.parametrize("dialect", sorted(REPEATED))
def test_a_key_repeated_with_its_own_type_is_still_the_engines_one_entry(dialect: str, pure: bool,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    if pure:
        monkeypatch.setattr(_fast, "fast_decode_prefix", None)
    sent, engine = REPEATED[dialect]
    value, used = decoder.decode_prefix(bytes.fromhex(sent), dialect)
    assert value == {1: 2} and used == len(sent) // 2
    assert encode(value, dialect).hex() == engine
    assert from_text("{\n1: 1,\n1: 2\n}", dialect) == value


#: {nan: 1, nan: 2} as bytes (hand-built, float32 NaNs): Godot 3.2.3's var2str and Godot 4.6's var_to_str both
#: printed "{\nnan: 2\n}" (every NaN key is one key to the engine's hash_compare); we read two keys
NAN_KEYS = {"godot3": "1200000002000000030000000000c07f0200000001000000030000000000c07f0200000002000000",
            "godot4": "1b00000002000000030000000000c07f0200000001000000030000000000c07f0200000002000000"}


@pytest.mark.parametrize("pure", [False, True], ids=["compiled", "pure"])
@pytest.mark.parametrize("dialect", sorted(NAN_KEYS))
def test_nan_keys_are_one_key_as_in_the_engine(dialect: str, pure: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if pure:
        monkeypatch.setattr(_fast, "fast_decode_prefix", None)
    value, used = decoder.decode_prefix(bytes.fromhex(NAN_KEYS[dialect]), dialect)
    assert used == len(NAN_KEYS[dialect]) // 2
    assert len(value) == 1 and list(value.values()) == [2]
    assert to_text(value, dialect) == "{\nnan: 2\n}"


# --- typed containers whose type the engine drops or completes ------------------------------------

#: (bytes, allow_objects, var_to_str and var_to_bytes of what Godot 4.6 (its web build) decoded from them)
ENGINE_TYPES = [
    ("1c00010000000000010000000200000005000000", False, "[5]", "1c000000010000000200000005000000"),
    ("1c0001000000000000000000", True, "[]", "1c00000000000000"),
    ("1b000100000000000100000002000000010000000200000002000000", False, "{\n1: 2\n}",
     "1b0000000100000002000000010000000200000002000000"),
    ("1b000400000000000100000002000000010000000200000002000000", True, "{\n1: 2\n}",
     "1b0000000100000002000000010000000200000002000000"),
    ("1b00050000000000000000000100000002000000010000000200000002000000", False, "{\n1: 2\n}",
     "1b0000000100000002000000010000000200000002000000"),
    ("1b0005000200000000000000010000000200000001000000040000000100000078000000", True,
     'Dictionary[int, Variant]({\n1: "x"\n})', "1b00010002000000010000000200000001000000040000000100000078000000"),
    ("1c0002000000000000000000", True, "Array[Object]([])", "1c0001001800000000000000"),
    ("1c0002000000000000000000", False, "Array[EncodedObjectAsID]([])",
     "1c00020011000000456e636f6465644f626a6563744173494400000000000000"),
    ("1b0002000000000000000000", True, "Dictionary[Object, Variant]({})", "1b0001001800000000000000"),
    ("1b0008000000000000000000", True, "Dictionary[Variant, Object]({})", "1b0004001800000000000000"),
]


#: Godot 4 Dictionaries keyed by typed Arrays (hand-built) and what Godot 4.6 (its web build) printed and re-encoded:
#: the key keeps its type, and an untyped Array of the same elements is the same key (the first stays)
TYPED_ARRAY_KEYS = [
    ("1b000000010000001c0001000200000001000000020000000100000000000000", "{\nArray[int]([1]): null\n}",
     "1b000000010000001c0001000200000001000000020000000100000000000000"),
    ("1b000000020000001c000100020000000000000002000000010000001c000000000000000200000002000000",
     "{\nArray[int]([]): 2\n}", "1b000000010000001c00010002000000000000000200000002000000"),
]


@pytest.mark.parametrize("pure", [False, True], ids=["compiled", "pure"])
@pytest.mark.parametrize("case", TYPED_ARRAY_KEYS, ids=[c[1][3:17] for c in TYPED_ARRAY_KEYS])
def test_typed_array_key_keeps_its_type(case: tuple, pure: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if pure:
        for name in ("fast_decode_prefix", "fast_text", "fast_json", "fast_encode_levels"):
            monkeypatch.setattr(_fast, name, None)
    data, text, engine = case
    value = decoder.decode_prefix(bytes.fromhex(data), "godot4")[0]
    assert to_text(value, "godot4") == text
    assert encode(value, "godot4").hex() == engine
    assert jsonform.loads(jsonform.dumps(value)) == value
    assert encode(jsonform.loads(jsonform.dumps(value)), "godot4").hex() == engine
    assert encode(from_text(text, "godot4"), "godot4").hex() == engine


@pytest.mark.parametrize("case", ENGINE_TYPES, ids=[f"{c[0][:24]}-{c[1]}" for c in ENGINE_TYPES])
def test_typed_container_type_as_the_engine_keeps_it(case: tuple) -> None:
    data, allow, text, engine = case
    value, used = decoder.decode_prefix(bytes.fromhex(data), "godot4", allow_objects=allow)
    assert used == len(data) // 2
    assert to_text(value, "godot4") == text
    assert encode(value, "godot4", full_objects=allow).hex() == engine
    assert jsonform.from_json(json.loads(jsonform.dumps(value))) == value


# --- hash flooding through Dictionary keys ----------------------------------------------------------

_M = 1 << 64
# CPython's tuple hash (Objects/tupleobject.c, 64-bit): xxHash's round over the items' hashes, no secret
_P1, _P2, _P5 = 11400714785074694791, 14029467366897019727, 2870177450012600261


def _round(acc: int, lane: int) -> int:
    acc = (acc + lane * _P2) % _M
    return (((acc << 31) | (acc >> 33)) % _M) * _P1 % _M


def _colliding_pairs(n: int) -> list[tuple[int, int]]:
    """n pairs of int64 (a, b) whose tuples all have the hash of (0, 0): for each a, the b whose hash finishes the
    round at the same value (an int's hash is the int itself modulo 2**61 - 1)."""
    target = _round(_round(_P5, 0), 0)
    undo = ((target * pow(_P1, -1, _M)) % _M)
    undo = ((undo >> 31) | (undo << 33)) % _M  # rotate right 31
    modulus = (1 << 61) - 1
    out, a = [], 1
    while len(out) < n:
        lane = (undo - _round(_P5, a)) * pow(_P2, -1, _M) % _M
        b = lane if lane < modulus - 1 else lane - _M if lane > _M - modulus + 1 else None
        if b is not None and hash(b) % _M == lane:
            out.append((a, b))
        a += 1
    return out


def _dictionary_of_array_keys(pairs: list[tuple[int, int]]) -> bytes:
    """A Godot 3 Dictionary {[a, b]: null, ...} as var2bytes writes it (ints past int32 as int64)."""
    def int_variant(x: int) -> bytes:
        if -2**31 <= x < 2**31:
            return (2).to_bytes(4, "little") + x.to_bytes(4, "little", signed=True)
        return (2 | 1 << 16).to_bytes(4, "little") + x.to_bytes(8, "little", signed=True)
    body = b"".join((19).to_bytes(4, "little") + (2).to_bytes(4, "little") + int_variant(a) + int_variant(b)
                    + bytes(4) for a, b in pairs)
    return (18).to_bytes(4, "little") + len(pairs).to_bytes(4, "little") + body


@pytest.mark.skipif(sys.hash_info.width != 64 or sys.implementation.name != "cpython", reason="CPython's 64-bit hash")
@pytest.mark.parametrize("pure", [False, True], ids=["compiled", "pure"])
def test_array_keys_of_one_hash_are_refused_past_the_limit(pure: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    pairs = _colliding_pairs(4000)
    assert len({hash(p) for p in pairs}) == 1 and len(set(pairs)) == len(pairs)
    if pure:
        monkeypatch.setattr(_fast, "fast_decode_prefix", None)
    data = _dictionary_of_array_keys(pairs)
    with pytest.raises(DecodeError, match=f"more than {MAX_KEYS_OF_ONE_HASH} Dictionary keys of one Python hash") \
            as e:
        decoder.decode_prefix(data, "godot3")
    # the key past the limit: where it starts
    assert e.value.offset == len(_dictionary_of_array_keys(pairs[:MAX_KEYS_OF_ONE_HASH]))
    text = "{" + ", ".join(f"[{a}, {b}]: null" for a, b in pairs) + "}"
    with pytest.raises(TextParseError, match="more than 64 Dictionary keys of one Python hash"):
        from_text(text, "godot3")
    form = {"type": "Dictionary", "items": [[[{"type": "int", "value": a, "wide": True} for a in p], None]
                                            for p in pairs]}
    with pytest.raises(ValueError, match="more than 64 Dictionary keys of one Python hash"):
        jsonform.from_json(form)


@pytest.mark.parametrize("pure", [False, True], ids=["compiled", "pure"])
def test_array_keys_of_distinct_hashes_still_decode(pure: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if pure:
        monkeypatch.setattr(_fast, "fast_decode_prefix", None)
    pairs = [(a, -a - 10**12) for a in range(1, 4001)]
    value = decoder.decode_prefix(_dictionary_of_array_keys(pairs), "godot3")[0]
    assert list(value) == pairs and set(value.values()) == {None}
    # a key repeated up to the limit is the engine's repeated key; one more is refused like a flood
    same = _dictionary_of_array_keys([pairs[0]] * MAX_KEYS_OF_ONE_HASH)
    assert decoder.decode_prefix(same, "godot3")[0] == {pairs[0]: None}
    with pytest.raises(DecodeError, match="more than 64 Dictionary keys of one Python hash"):
        decoder.decode_prefix(_dictionary_of_array_keys([pairs[0]] * (MAX_KEYS_OF_ONE_HASH + 1)), "godot3")


# --- the Godot 3 key order, where it is no order ------------------------------------------------------

#: Array keys (the Godot 3 Dictionary's, as decoded) on which Godot 3's Array OP_LESS is no order
NO_ORDER_KEYS = {
    "i, n - i": lambda n: [(i, n - i) for i in range(n)],
    "n - i, i": lambda n: [(n - i, i) for i in range(n)],
    "i % 7, -i": lambda n: [(i % 7, -i) for i in range(n)],
    "i % 3, i % 5, -i": lambda n: [(i % 3, i % 5, -i) for i in range(n)],
}


@pytest.mark.parametrize("shape", sorted(NO_ORDER_KEYS))
def test_godot3_key_sort_compares_n_log_n_times_where_arrays_have_no_order(shape: str) -> None:
    order = VariantOrder(get_dialect("godot3"))
    counts = []
    for n in (2000, 4000):
        calls = [0]

        def less(a: object, b: object, calls: list[int] = calls) -> bool:
            calls[0] += 1
            return order.less(a, b)
        keys = NO_ORDER_KEYS[shape](n)
        assert sorted(godot_sort(keys, less)) == sorted(keys)  # a permutation, nothing lost
        counts.append(calls[0])
    # about 2.5-7 n log2 n comparisons (it was ~n**2 / 1.5: 10.7 million at 4000 keys)
    assert counts[1] <= 8 * 4000 * 12, counts
    assert counts[1] <= 2.3 * counts[0], counts


def test_godot3_key_sort_where_it_is_an_order_is_the_sorted_order() -> None:
    """Where ``less`` is an order, bounding the scans and moves changes nothing: the keys come out sorted."""
    order = VariantOrder(get_dialect("godot3"))
    keys = [(i * 7919) % 4000 for i in range(4000)] + [float(i) + 0.5 for i in range(-500, 500)]
    assert godot_sort(keys, order.less) == sorted(keys, key=lambda k: (type(k) is float, k))  # int ranks first
