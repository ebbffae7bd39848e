r"""The lossless JSON form of Godot values.

Plain JSON where it is unambiguous — ``null``, ``true``/``false``, strings (String), integers
that travel as int32 or int64 by the engine's own choice, finite floats written with a decimal
point, and lists (untyped Array). Every other value is an object tagged with its Godot 4 type
name::

    {"type": "int", "value": 5, "wide": true}           # int sent as 64-bit
    {"type": "float", "value": "nan", "bits": 32}        # nan/inf/-inf, or a forced width
    {"type": "StringName", "value": "hp"}
    {"type": "Vector3", "value": [1.0, 2.0, 3.0]}        # math types: components depth-first
    {"type": "NodePath", "path": "a/b:c", "names": ["a", "b"], "subnames": ["c"], "absolute": false}
    {"type": "RID", "id": 13}   {"type": "Object", "id": 1288}   {"type": "Callable"}
    {"type": "Object", "class": "Node", "properties": [["name", "x"], ...]}
    {"type": "Signal", "name": "hit", "object_id": 5}
    {"type": "Dictionary", "items": [[key, value], ...], "key_type": {...}, "value_type": {...}}
    {"type": "Array", "element": {"kind": "builtin", "name": "int"}, "items": [...]}
    {"type": "PackedByteArray", "hex": "010203"}
    {"type": "PackedVector2Array", "value": [[1.0, 2.0], ...]}
    {"type": "SubResource", "id": 2}

``from_json(to_json(v))`` gives ``v`` back with the same wire width.

Depth: a record's JSON line nests at most :data:`JSON_MAX_DEPTH` levels (jq 1.6 reads 256, Python's
``json.loads`` about 990). A value whose JSON form would nest deeper — Godot allows 1024 levels,
and a Dictionary is three JSON levels — is written flat instead, node by node::

    {"type": "Flat", "nodes": [node0, node1, ...]}    # node0 is the value

where every container (Array, Dictionary, Object with properties) inside a node stands as
``{"node": i}``, a reference to ``nodes[i]`` (always after its parent). ``from_json`` reads it back.

Strings: any code point is written, lone surrogates (a Godot 3 String may hold the UTF-8 of one)
as the JSON escape ``\udXXX`` (``"\ud800"``), which ``json.loads`` reads back as that code point.
"""

from __future__ import annotations

import json
import math
import re
from array import array
from typing import Any

from . import values as V
from .codec import fast as _fast
from .deep import deep_recursion
from .spec.transports import MAX_DEPTH, MAX_KEYS_OF_ONE_HASH
from .text.writer import SURROGATE_ESCAPES

#: most JSON nesting levels of one record line (the record object included); deeper values are
#: written in the flat form (see the module docstring)
JSON_MAX_DEPTH = 256
#: the same bound for a value on its own (it sits one level inside its record)
VALUE_MAX_DEPTH = JSON_MAX_DEPTH - 1
#: most JSON levels :func:`loads` / :func:`from_json` take: a value the engine decodes nests at most
#: ``MAX_DEPTH`` containers, each at most 3 JSON levels (a Dictionary's ``items``, a pair), plus its record's
#: level; deeper is a ValueError (Python's own JSON reader would hit the recursion limit)
JSON_READ_MAX_DEPTH = 3 * MAX_DEPTH + 2

_SURROGATES = re.compile("[\ud800-\udfff]")


def _num(x: float) -> Any:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def _unnum(x: Any) -> float:
    return float(x) if isinstance(x, str) else float(x)


def _flat(v: tuple) -> list:
    out: list = []
    for c in v:
        if isinstance(c, tuple):
            out += _flat(c)
        else:
            out.append(_num(c) if isinstance(c, float) else c)
    return out


def _unflat(cls: type, it: Any) -> Any:
    args = []
    for name in cls._fields:  # type: ignore[attr-defined]
        default = cls._field_defaults.get(name)  # type: ignore[attr-defined]
        if isinstance(default, tuple):
            args.append(_unflat(type(default), it))
        else:
            x = next(it)
            args.append(_unnum(x) if isinstance(default, float) else x)
    return cls(*args)


_MATH = {cls.__name__: cls for cls in (
    V.Vector2, V.Vector2i, V.Vector3, V.Vector3i, V.Vector4, V.Vector4i, V.Rect2, V.Rect2i,
    V.Transform2D, V.Plane, V.Quaternion, V.AABB, V.Basis, V.Transform3D, V.Projection, V.Color)}
_PACKED = {cls.__name__: cls for cls in (
    V.PackedInt32Array, V.PackedInt64Array, V.PackedFloat32Array, V.PackedFloat64Array,
    V.PackedVector2Array, V.PackedVector3Array, V.PackedVector4Array, V.PackedColorArray)}


def _ctype(t: V.ContainerType | None) -> Any:
    return None if t is None else {"kind": t.kind, "name": t.name}


def _unctype(d: Any) -> V.ContainerType | None:
    return None if d is None else V.ContainerType(d["kind"], d["name"])


def to_json(value: Any) -> Any:
    """Godot value -> JSON-ready Python data (see the module docstring); the flat form when the
    nested one would be deeper than :data:`VALUE_MAX_DEPTH`."""
    try:
        with deep_recursion():
            data = _to(value)
    except RecursionError:  # nested past DEEP_LIMIT frames (a value read from text may nest any depth)
        return _to_flat(value)
    if type(data) in (list, dict) and _json_depth(data) > VALUE_MAX_DEPTH:
        return _to_flat(value)
    return data


def _json_depth(data: Any) -> int:
    """How many levels of JSON containers ``data`` nests (iterative)."""
    deepest = 0
    stack = [(data, 1)]
    while stack:
        d, depth = stack.pop()
        deepest = max(deepest, depth)
        for x in d.values() if type(d) is dict else d:
            if type(x) is list or type(x) is dict:
                stack.append((x, depth + 1))
    return deepest


#: the classes that are a node of their own in the flat form (exact classes: math types are tuples)
_CONTAINERS = frozenset((list, tuple, dict, V.FrozenDict, V.Object, V.TypedArray, V.FrozenTypedArray,
                         V.TypedDictionary))


def _to_flat(value: Any) -> dict[str, Any]:
    """The flat form: one node per container, containers inside a node as ``{"node": i}``."""
    nodes: list[Any] = [None]
    work = [(0, value)]

    def ref(x: Any) -> Any:
        if type(x) in _CONTAINERS:
            nodes.append(None)
            work.append((len(nodes) - 1, x))
            return {"node": len(nodes) - 1}
        return _to(x)  # a leaf: a few JSON levels at most

    while work:
        i, v = work.pop()
        if type(v) is V.Object:
            nodes[i] = {"type": "Object", "class": v.class_name,
                        "properties": [[k, ref(x)] for k, x in v.properties.items()]}
        elif type(v) in (dict, V.FrozenDict, V.TypedDictionary):
            node: dict[str, Any] = {"type": "Dictionary", "items": [[ref(k), ref(x)] for k, x in v.items()]}
            if type(v) is V.TypedDictionary:
                node["key_type"], node["value_type"] = _ctype(v.key_type), _ctype(v.value_type)
            nodes[i] = node
        elif type(v) is V.TypedArray or type(v) is V.FrozenTypedArray:
            nodes[i] = {"type": "Array", "element": _ctype(v.element), "items": [ref(x) for x in v]}
        else:
            nodes[i] = [ref(x) for x in v]
    return {"type": "Flat", "nodes": nodes}


def _from_flat(nodes: list[Any]) -> Any:
    """Inverse of :func:`_to_flat`: children come after their parent, so build from the end. The nodes
    must form the tree :func:`_to_flat` writes: a node referred to twice (its value would be written once
    per reference: 40 nodes of two references each are 2**40 elements) or by a later node is refused."""
    built: list[Any] = [None] * len(nodes)
    taken = bytearray(len(nodes))
    i = 0

    def get(x: Any) -> Any:
        if type(x) is dict and "node" in x and "type" not in x:
            j = x["node"]
            if type(j) is not int or not i < j < len(nodes) or taken[j]:
                raise ValueError(f"flat JSON form: node {i} refers to node {j!r}, which is not a node after it "
                                 f"that no other node refers to")
            taken[j] = 1
            return built[j]
        return _from(x)

    for i in range(len(nodes) - 1, -1, -1):
        n = nodes[i]
        if isinstance(n, list):
            built[i] = [get(x) for x in n]
        elif n["type"] == "Object":
            built[i] = V.Object(_text(n["class"]), {_text(k): get(x) for k, x in n["properties"]})
        elif n["type"] == "Array":
            built[i] = V.TypedArray(_unctype(n.get("element")), [get(x) for x in n["items"]])
        elif n["type"] == "Dictionary":
            items = _pairs([(V.freeze(get(k)), get(x)) for k, x in n["items"]])
            if "key_type" in n or "value_type" in n:
                built[i] = V.TypedDictionary(_unctype(n.get("key_type")), _unctype(n.get("value_type")), items)
            else:
                built[i] = dict(items)
        else:
            raise ValueError(f"flat JSON form: node {i} is no container")
    return built[0]


def escape_surrogates(text: str) -> str:
    """JSON text with every lone surrogate (raw in a string, as ``ensure_ascii=False`` leaves
    it) written as the escape ``\\udXXX``: the text then encodes as UTF-8."""
    if text.isascii() or not _SURROGATES.search(text):
        return text
    return _SURROGATES.sub(lambda m: SURROGATE_ESCAPES[ord(m.group())], text)


def _to(v: Any) -> Any:
    t = type(v)
    if t is str or t is int or t is bool or v is None:
        return v
    h = _HANDLERS.get(t)
    if h is None:
        raise TypeError(f"no JSON form for {t.__name__}")
    return h(v)


def _float(v: float) -> Any:
    return v if v - v == 0.0 else {"type": "float", "value": _num(v)}  # v - v is nan for inf/nan


def _math_handler(name: str) -> Any:
    def h(v: tuple) -> Any:
        return {"type": name, "value": _flat(v)}
    return h


def _list(v: Any) -> Any:
    return [x if type(x) is str or type(x) is int else _to(x) for x in v]


def _dict(v: Any) -> Any:
    d: dict[str, Any] = {"type": "Dictionary", "items": [[_to(k), _to(x)] for k, x in v.items()]}
    if type(v) is V.TypedDictionary:
        d["key_type"], d["value_type"] = _ctype(v.key_type), _ctype(v.value_type)
    return d


def _packed(v: Any) -> Any:
    if v.width == 1:
        return {"type": type(v).__name__, "value": [_num(x) if isinstance(x, float) else x for x in v.array]}
    return {"type": type(v).__name__, "value": [_flat(e) for e in v]}


_HANDLERS: dict[type, Any] = {
    float: _float,
    V.WideInt: lambda v: {"type": "int", "value": int(v), "wide": True},
    V.Float64: lambda v: {"type": "float", "value": _num(float(v)), "bits": 64},
    V.Float32: lambda v: {"type": "float", "value": _num(float(v)), "bits": 32},
    V.StringName: lambda v: {"type": "StringName", "value": str(v)},
    list: _list,
    tuple: _list,
    V.TypedArray: lambda v: {"type": "Array", "element": _ctype(v.element), "items": _list(v)},
    V.FrozenTypedArray: lambda v: {"type": "Array", "element": _ctype(v.element), "items": _list(v)},
    dict: _dict,
    V.FrozenDict: _dict,
    V.TypedDictionary: _dict,
    V.NodePath: lambda v: {"type": "NodePath", "path": str(v), "names": list(v.names),
                           "subnames": list(v.subnames), "absolute": v.absolute},
    V.RID: lambda v: {"type": "RID", "id": v.id},
    V.ObjectID: lambda v: {"type": "Object", "id": v.id},
    V.Object: lambda v: {"type": "Object", "class": v.class_name,
                         "properties": [[k, _to(x)] for k, x in v.properties.items()]},
    V.Callable: lambda v: {"type": "Callable"},
    V.Signal: lambda v: {"type": "Signal", "name": v.name, "object_id": v.object_id},
    bytes: lambda v: {"type": "PackedByteArray", "hex": v.hex()},
    bytearray: lambda v: {"type": "PackedByteArray", "hex": bytes(v).hex()},
    memoryview: lambda v: {"type": "PackedByteArray", "hex": bytes(v).hex()},
    V.PackedStringArray: lambda v: {"type": "PackedStringArray", "value": list(v)},
    V.ResourceRef: lambda v: {"type": v.kind, "id": v.id},
    **{cls: _math_handler(name) for name, cls in _MATH.items()},
    **{cls: _packed for cls in _PACKED.values()},
}


def c_tables() -> tuple[dict[type, tuple[str, str | None, int]], int]:
    """What the C JSON writer is built from: the entries below and the depth it may write."""
    return compiled_entries(), VALUE_MAX_DEPTH


def compiled_entries() -> dict[type, tuple[str, str | None, int]]:
    """The classes codec/_render.c writes besides the plain JSON ones (str, int, float, bool,
    None, list, tuple, dict), as ``(kind, name, n)``; every other class is written here."""
    def name(v: Any) -> str:
        return _to(v)["type"]

    out: dict[type, tuple[str, str | None, int]] = {
        V.WideInt: ("wide_int", None, 0), V.Float64: ("float_bits", None, 64),
        V.Float32: ("float_bits", None, 32), V.StringName: ("string_name", None, 0),
        bytes: ("bytes", None, 0), bytearray: ("bytes", None, 0), V.PackedStringArray: ("strings", None, 0),
        V.RID: ("id", name(V.RID()), 0), V.ObjectID: ("id", name(V.ObjectID()), 0),
        V.Callable: ("const", json.dumps(_to(V.Callable())), 0),
    }
    out.update({cls: ("math", n, 0) for n, cls in _MATH.items()})
    out.update({cls: ("packed", n, cls.width) for n, cls in _PACKED.items()})
    return out


def from_json(data: Any) -> Any:
    """Inverse of :func:`to_json`; ValueError for data that is no JSON form of a Godot value (or nests
    deeper than :data:`JSON_READ_MAX_DEPTH`)."""
    if type(data) in (list, dict) and _json_depth(data) > JSON_READ_MAX_DEPTH:
        raise ValueError(f"JSON form nested deeper than {JSON_READ_MAX_DEPTH} levels (the engine decodes "
                         f"{MAX_DEPTH} levels of containers)")
    try:
        with deep_recursion():
            return _from(data)
    except (KeyError, IndexError, TypeError, AttributeError, StopIteration, OverflowError) as e:
        raise ValueError(f"not the JSON form of a Godot value: {type(e).__name__}: {e}") from None


def _text(x: Any) -> str:
    if type(x) is not str:
        raise TypeError(f"{x!r:.40} where a string belongs")
    return x


def _texts(xs: Any) -> list[str]:
    return [_text(x) for x in xs]


def _pairs(items: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """A Dictionary's pairs; ValueError when Python would merge two keys Godot keeps apart (``true`` and ``1``), or
    for more than MAX_KEYS_OF_ONE_HASH keys of one hash (values.hash_flooded)."""
    hashes: dict[int, int] = {}
    for k, _ in items:
        if type(k) not in V.SAFE_KEY_TYPES and V.hash_flooded(hashes, k, MAX_KEYS_OF_ONE_HASH):
            raise ValueError(V.hash_flood_reason(MAX_KEYS_OF_ONE_HASH))
    keys = {k: k for k, _ in items}
    if len(keys) < len(items):
        stored: dict[Any, Any] = {}
        for k, _ in items:
            first = V.key_clash(stored, k, k in stored)
            if first is not None:
                raise ValueError(V.key_clash_reason(k, first))
    return items


def _from(d: Any) -> Any:
    if d is None or isinstance(d, (bool, str, int, float)):
        return d
    if isinstance(d, list):
        return [_from(x) for x in d]
    t = d["type"]
    if t == "Flat":
        return _from_flat(d["nodes"])
    if t == "int":
        return V.WideInt(d["value"]) if d.get("wide") else int(d["value"])
    if t == "float":
        x = _unnum(d["value"])
        bits = d.get("bits")
        return V.Float64(x) if bits == 64 else V.Float32(x) if bits == 32 else x
    if t == "StringName":
        return V.StringName(_text(d["value"]))
    if t in _MATH:
        return _unflat(_MATH[t], iter(d["value"]))
    if t == "Array":
        items = [_from(x) for x in d["items"]]
        el = _unctype(d.get("element"))
        return V.TypedArray(el, items) if el else items
    if t == "Dictionary":
        items = _pairs([(V.freeze(_from(k)), _from(x)) for k, x in d["items"]])
        if "key_type" in d or "value_type" in d:
            return V.TypedDictionary(_unctype(d.get("key_type")), _unctype(d.get("value_type")), items)
        return dict(items)
    if t == "NodePath":
        return V.NodePath(_texts(d["names"]), _texts(d["subnames"]), d["absolute"])
    if t == "RID":
        return V.RID(d["id"])
    if t == "Object":
        if "id" in d:
            return V.ObjectID(d["id"])
        return V.Object(_text(d["class"]), {_text(k): _from(x) for k, x in d["properties"]})
    if t == "Callable":
        return V.Callable()
    if t == "Signal":
        return V.Signal(_text(d["name"]), d["object_id"])
    if t == "PackedByteArray":
        return bytes.fromhex(d["hex"])
    if t == "PackedStringArray":
        return V.PackedStringArray(_texts(d["value"]))
    if t in _PACKED:
        cls = _PACKED[t]
        tc = None
        vals = d["value"]
        if cls.width > 1:
            vals = [c for e in vals for c in e]
        if cls.typecode in "fd":
            vals = [_unnum(x) for x in vals]
        obj = cls.__new__(cls)
        obj.array = array(tc or cls.typecode, vals)
        return obj
    if t in ("SubResource", "ExtResource"):
        return V.ResourceRef(t, d["id"])
    raise ValueError(f"unknown JSON value type {t!r}")


def dumps(value: Any, **kw: Any) -> str:
    """``json.dumps(to_json(value))`` with room for deeply nested values."""
    if not kw and _fast.fast_json is not None and (s := _fast.fast_json(value, c_tables)) is not None:
        return s  # the compiled writer (codec/_render.c); None: it left this value to Python
    return escape_surrogates(json.dumps(to_json(value), ensure_ascii=False, **kw))


def record_line(head: dict[str, Any], text: str | None = None, value: Any = None) -> str:
    """``json_text({**head, "text": text, "value": to_json(value)})``, or of ``head`` alone when
    ``text`` is None: one record's JSON line, in one go by the compiled writer when it can."""
    fast = _fast.fast_json_line
    if fast is not None and (s := fast(head, text, value, c_tables)) is not None:
        return s
    if text is not None:
        head = {**head, "text": text, "value": to_json(value)}
    return json_text(head)  # the value is within VALUE_MAX_DEPTH: no deep_recursion needed


def record_object_line(rec: Any, type_name: str, text: str, optional: tuple[str, ...]) -> str | None:
    """``records.Record.to_jsonl`` of a record without error, fields or hex, written by the compiled
    writer straight from its attributes (``optional``: the head's keys present when not None), or
    None (not built, or it left the record to Python)."""
    fast = _fast.fast_json_record
    return fast(rec, type_name, text, optional, c_tables) if fast is not None else None


def loads(text: str) -> Any:
    """:func:`from_json` of a JSON text; ValueError for any text that is not the JSON form of a value."""
    try:
        with deep_recursion():
            data = json.loads(text)
    except RecursionError:
        raise ValueError(f"JSON nested deeper than {JSON_READ_MAX_DEPTH} levels") from None
    return from_json(data)


def json_text(data: Any, **kw: Any) -> str:
    """``json.dumps`` of data that already holds JSON forms (records), deep values included;
    lone surrogates escaped (:func:`escape_surrogates`)."""
    with deep_recursion():
        return escape_surrogates(json.dumps(data, ensure_ascii=False, **kw))
