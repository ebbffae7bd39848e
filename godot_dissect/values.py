"""Python types for Godot values.

Plain Python types stand for the common ones: ``None`` (null), ``bool``, ``int``, ``float``,
``str`` (String), ``list`` (Array), ``dict`` (Dictionary), ``bytes`` (PackedByteArray). Everything
else has a small immutable class here. Math types are named tuples whose equality also compares
the type, so ``Vector2(1, 2) != Vector2i(1, 2)``.

Wire width is remembered where the engine's encoder would not pick it again by itself:
:class:`WideInt` (an int sent as 64-bit that fits in 32), :class:`Float64` (a float sent as
64-bit that fits in 32) and :class:`Float32` (a float32 NaN). Re-encoding them is byte-identical.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterable, Iterator, Mapping
from contextlib import suppress
from typing import Any, NamedTuple


class WideInt(int):
    """An int that travels as int64 although it fits in int32."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"WideInt({int(self)})"


class Float64(float):
    """A float that travels as float64 although float32 would hold it exactly."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Float64({float(self)!r})"


class Float32(float):
    """A float that travels as float32 although the encoder would pick float64 (a NaN)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Float32({float(self)!r})"


class StringName(str):
    """Godot 4 ``StringName`` (``&"name"``): a String with its own type id."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"StringName({str(self)!r})"


def _typed_eq(self: tuple, other: object) -> bool:
    return type(self) is type(other) and tuple.__eq__(self, other)  # type: ignore[arg-type]


def _typed_ne(self: tuple, other: object) -> bool:
    return not _typed_eq(self, other)


def _typed_hash(self: tuple) -> int:
    return hash((type(self).__name__, tuple(self)))


class _Math:
    """Mixin: equality and hashing that include the type (applied after class creation)."""


def _math(cls: type) -> type:
    """Typed equality; float components coerced to float so ``Vector2(1, 2)`` holds 1.0, 2.0."""
    if all(type(d) is float for d in cls._field_defaults.values()):  # type: ignore[attr-defined]
        new = tuple.__new__

        def __new__(c: type, *args: Any, **kw: Any) -> Any:
            if kw:
                args = args + tuple(kw.pop(f) for f in c._fields[len(args):] if f in kw)  # type: ignore[attr-defined]
            fields = c._fields  # type: ignore[attr-defined]
            if len(args) > len(fields):
                raise TypeError(f"{c.__name__} takes at most {len(fields)} components")
            vals = [float(a) for a in args] + [c._field_defaults[f] for f in fields[len(args):]]  # type: ignore[attr-defined]
            return new(c, vals)

        cls.__new__ = __new__  # type: ignore[method-assign]
    cls.__eq__ = _typed_eq  # type: ignore[assignment]
    cls.__ne__ = _typed_ne  # type: ignore[assignment]
    cls.__hash__ = _typed_hash  # type: ignore[assignment]
    return cls


@_math
class Vector2(NamedTuple):
    x: float = 0.0
    y: float = 0.0


@_math
class Vector2i(NamedTuple):
    x: int = 0
    y: int = 0


@_math
class Vector3(NamedTuple):
    x: float = 0.0
    y: float = 0.0
    z: float = 0.0


@_math
class Vector3i(NamedTuple):
    x: int = 0
    y: int = 0
    z: int = 0


@_math
class Vector4(NamedTuple):
    x: float = 0.0
    y: float = 0.0
    z: float = 0.0
    w: float = 0.0


@_math
class Vector4i(NamedTuple):
    x: int = 0
    y: int = 0
    z: int = 0
    w: int = 0


@_math
class Rect2(NamedTuple):
    position: Vector2 = Vector2()
    size: Vector2 = Vector2()


@_math
class Rect2i(NamedTuple):
    position: Vector2i = Vector2i()
    size: Vector2i = Vector2i()


@_math
class Transform2D(NamedTuple):
    """Columns: the x and y axes and the origin."""

    x: Vector2 = Vector2(1.0, 0.0)
    y: Vector2 = Vector2(0.0, 1.0)
    origin: Vector2 = Vector2()


@_math
class Plane(NamedTuple):
    """normal = (x, y, z); ``d`` is the distance from the origin."""

    x: float = 0.0
    y: float = 0.0
    z: float = 0.0
    d: float = 0.0

    @property
    def normal(self) -> Vector3:
        return Vector3(self.x, self.y, self.z)


@_math
class Quaternion(NamedTuple):
    x: float = 0.0
    y: float = 0.0
    z: float = 0.0
    w: float = 1.0


@_math
class AABB(NamedTuple):
    position: Vector3 = Vector3()
    size: Vector3 = Vector3()


@_math
class Basis(NamedTuple):
    """Columns: the x, y and z axes (as Godot's ``Basis(x_axis, y_axis, z_axis)``)."""

    x: Vector3 = Vector3(1.0, 0.0, 0.0)
    y: Vector3 = Vector3(0.0, 1.0, 0.0)
    z: Vector3 = Vector3(0.0, 0.0, 1.0)


@_math
class Transform3D(NamedTuple):
    basis: Basis = Basis()
    origin: Vector3 = Vector3()


@_math
class Projection(NamedTuple):
    """Columns x, y, z, w."""

    x: Vector4 = Vector4(1.0, 0.0, 0.0, 0.0)
    y: Vector4 = Vector4(0.0, 1.0, 0.0, 0.0)
    z: Vector4 = Vector4(0.0, 0.0, 1.0, 0.0)
    w: Vector4 = Vector4(0.0, 0.0, 0.0, 1.0)


@_math
class Color(NamedTuple):
    r: float = 0.0
    g: float = 0.0
    b: float = 0.0
    a: float = 1.0


@_math
class RID(NamedTuple):
    id: int = 0


@_math
class ObjectID(NamedTuple):
    """An Object sent as its instance id (``EncodedObjectAsID``); id 0 is a null Object."""

    id: int = 0


@_math
class Signal(NamedTuple):
    name: str = ""
    object_id: int = 0


class Callable:
    """A Callable: Godot never sends its target, so every Callable on the wire is the same."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Callable)

    def __hash__(self) -> int:
        return hash("Callable")

    def __repr__(self) -> str:
        return "Callable()"


class NodePath:
    """``names`` separated by ``/``, then ``subnames`` each after a ``:``; ``absolute`` = leading ``/``."""

    __slots__ = ("names", "subnames", "absolute")

    def __init__(self, path: str | Iterable[str] = "", subnames: Iterable[str] = (),
                 absolute: bool = False) -> None:
        if isinstance(path, str):
            parsed = NodePath.parse(path)
            names, subnames, absolute = parsed.names, parsed.subnames + tuple(subnames), parsed.absolute
        else:
            names = tuple(path)
        object.__setattr__(self, "names", tuple(names))
        object.__setattr__(self, "subnames", tuple(subnames))
        object.__setattr__(self, "absolute", bool(absolute))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("NodePath is immutable")

    def __reduce__(self) -> tuple[type, tuple[tuple[str, ...], tuple[str, ...], bool]]:
        # pickle (multiprocessing, Dask) rebuilds through __init__: the default would set the slots
        return NodePath, (self.names, self.subnames, self.absolute)

    @staticmethod
    def parse(text: str) -> NodePath:
        """Godot's NodePath(String) rules: ``/`` separates names, ``:`` starts each subname."""
        absolute = text.startswith("/")
        body = text[1:] if absolute else text
        head, *subs = body.split(":")
        names = tuple(n for n in head.split("/") if n) if head else ()
        p = object.__new__(NodePath)
        object.__setattr__(p, "names", names)
        object.__setattr__(p, "subnames", tuple(s for s in subs if s))
        object.__setattr__(p, "absolute", absolute)
        return p

    def __str__(self) -> str:
        s = ("/" if self.absolute else "") + "/".join(self.names)
        return s + "".join(":" + n for n in self.subnames)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, NodePath) and self.names == other.names
                and self.subnames == other.subnames and self.absolute == other.absolute)

    def __hash__(self) -> int:
        return hash((self.names, self.subnames, self.absolute))

    def __repr__(self) -> str:
        return f"NodePath({str(self)!r})"


class Object:
    """A full Object: class name and stored properties in the engine's order. An empty class
    name is the null Object in its full form."""

    __slots__ = ("class_name", "properties")

    def __init__(self, class_name: str, properties: Mapping[str, Any] | None = None) -> None:
        self.class_name = class_name
        self.properties = dict(properties or {})

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Object) and self.class_name == other.class_name
                and list(self.properties.items()) == list(other.properties.items()))

    def __hash__(self) -> int:
        return hash(("Object", self.class_name))

    def __repr__(self) -> str:
        return f"Object({self.class_name!r}, {self.properties!r})"


class ContainerType(NamedTuple):
    """Element type of a typed Array, or key/value type of a typed Dictionary.

    ``kind`` is ``"builtin"`` (``name`` is the engine's type name, e.g. ``"int"``),
    ``"class_name"`` (a class such as ``"Node"``) or ``"script"`` (a ``res://`` path).
    """

    kind: str
    name: str


class TypedArray(list):
    """``Array[T]``: a list that keeps its element type."""

    __slots__ = ("element",)

    def __init__(self, element: ContainerType, items: Iterable[Any] = ()) -> None:
        super().__init__(items)
        self.element = element

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TypedArray):
            return self.element == other.element and list.__eq__(self, other)
        return list.__eq__(self, other)  # type: ignore[arg-type]

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"TypedArray({self.element!r}, {list.__repr__(self)})"


class FrozenTypedArray(tuple):
    """A typed Array used as a Dictionary key (Python needs it hashable): a tuple that keeps its element type. It
    equals the untyped Array of the same elements, as the engine's keys do."""

    element: ContainerType

    def __new__(cls, element: ContainerType, items: Iterable[Any] = ()) -> FrozenTypedArray:
        obj = super().__new__(cls, items)
        obj.element = element
        return obj

    def __reduce__(self) -> tuple[type, tuple[ContainerType, tuple[Any, ...]]]:
        return FrozenTypedArray, (self.element, tuple(self))

    def __repr__(self) -> str:
        return f"FrozenTypedArray({self.element!r}, {tuple.__repr__(self)})"


#: the classes of a typed Array
TYPED_ARRAYS = (TypedArray, FrozenTypedArray)


class TypedDictionary(dict):
    """``Dictionary[K, V]``: a dict that keeps its key and value types (None = untyped side)."""

    __slots__ = ("key_type", "value_type")

    def __init__(self, key_type: ContainerType | None, value_type: ContainerType | None,
                 items: Mapping[Any, Any] | Iterable[tuple[Any, Any]] = ()) -> None:
        super().__init__(items)
        self.key_type = key_type
        self.value_type = value_type

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TypedDictionary):
            return (self.key_type == other.key_type and self.value_type == other.value_type
                    and dict.__eq__(self, other))
        return dict.__eq__(self, other)  # type: ignore[arg-type]

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"TypedDictionary({self.key_type!r}, {self.value_type!r}, {dict.__repr__(self)})"


class FrozenDict(Mapping):
    """A Dictionary used as a Dictionary key (Godot allows it; Python needs it hashable)."""

    __slots__ = ("_d", "_h")

    def __init__(self, items: Mapping[Any, Any] | Iterable[tuple[Any, Any]] = ()) -> None:
        self._d = dict(items)
        self._h: int | None = None

    def __getitem__(self, k: Any) -> Any:
        return self._d[k]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    def __hash__(self) -> int:
        if self._h is None:
            self._h = hash(tuple(self._d.items()))
        return self._h

    def __reduce__(self) -> tuple[type, tuple[list[tuple[Any, Any]]]]:
        # not the cached hash: str hashes differ from one process to the next
        return FrozenDict, (list(self._d.items()),)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and dict(self._d) == dict(other)

    def __repr__(self) -> str:
        return f"FrozenDict({self._d!r})"


_SWAP = sys.byteorder != "little"


class PackedArray:
    """Base of the packed arrays: a flat ``array.array`` of components, never one Python object
    per element until an element is asked for."""

    __slots__ = ("array",)
    typecode = "i"
    width = 1  # components per element
    element_type: type | None = None  # math type of one element, or None for scalars

    def __init__(self, items: Iterable[Any] = (), typecode: str | None = None) -> None:
        a = array(typecode or self.typecode)
        if self.width == 1:
            a.extend(items)
        else:
            for it in items:
                a.extend(it)
        self.array = a

    @classmethod
    def from_bytes(cls, data: bytes | memoryview, typecode: str | None = None) -> PackedArray:
        """Wrap little-endian wire bytes without per-element work."""
        obj = cls.__new__(cls)
        a = array(typecode or cls.typecode)
        a.frombytes(data)
        if _SWAP:
            a.byteswap()
        obj.array = a
        return obj

    def to_bytes(self, typecode: str | None = None) -> bytes:
        a = self.array
        if typecode is not None and typecode != a.typecode:
            a = array(typecode, a)
        if _SWAP:
            a = array(a.typecode, a)
            a.byteswap()
        return a.tobytes()

    def __len__(self) -> int:
        return len(self.array) // self.width

    def __getitem__(self, i: int) -> Any:
        if self.width == 1:
            return self.array[i]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        w = self.width
        return self.element_type(*self.array[i * w:(i + 1) * w])  # type: ignore[misc]

    def __iter__(self) -> Iterator[Any]:
        if self.width == 1:
            return iter(self.array)
        et, w, a = self.element_type, self.width, self.array
        return (et(*a[i:i + w]) for i in range(0, len(a), w))  # type: ignore[misc]

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.array.tolist() == other.array.tolist()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.array.tobytes()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self)!r})"


class PackedInt32Array(PackedArray):
    __slots__ = ()
    typecode = "i"


class PackedInt64Array(PackedArray):
    __slots__ = ()
    typecode = "q"


class PackedFloat32Array(PackedArray):
    __slots__ = ()
    typecode = "f"


class PackedFloat64Array(PackedArray):
    __slots__ = ()
    typecode = "d"


class PackedVector2Array(PackedArray):
    __slots__ = ()
    typecode = "f"
    width = 2
    element_type = Vector2


class PackedVector3Array(PackedArray):
    __slots__ = ()
    typecode = "f"
    width = 3
    element_type = Vector3


class PackedVector4Array(PackedArray):
    __slots__ = ()
    typecode = "f"
    width = 4
    element_type = Vector4


class PackedColorArray(PackedArray):
    __slots__ = ()
    typecode = "f"
    width = 4
    element_type = Color


class PackedStringArray(tuple):
    """PackedStringArray / PoolStringArray: an immutable tuple of str."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return type(other) is PackedStringArray and tuple.__eq__(self, other)  # type: ignore[arg-type]

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(("PackedStringArray", tuple(self)))

    def __repr__(self) -> str:
        return f"PackedStringArray({list(self)!r})"


class ResourceRef(NamedTuple):
    """``SubResource(id)`` / ``ExtResource(id)`` in text scenes; it has no binary form."""

    kind: str  # "SubResource" or "ExtResource"
    id: int | str


#: value class -> spec type key (the codec and text notation dispatch on it)
CLASS_KEYS: dict[type, str] = {
    type(None): "NIL", bool: "BOOL", int: "INT", WideInt: "INT", float: "FLOAT", Float64: "FLOAT",
    Float32: "FLOAT", str: "STRING", StringName: "STRING_NAME", Vector2: "VECTOR2",
    Vector2i: "VECTOR2I", Rect2: "RECT2", Rect2i: "RECT2I", Vector3: "VECTOR3", Vector3i: "VECTOR3I",
    Transform2D: "TRANSFORM2D", Vector4: "VECTOR4", Vector4i: "VECTOR4I", Plane: "PLANE",
    Quaternion: "QUATERNION", AABB: "AABB", Basis: "BASIS", Transform3D: "TRANSFORM3D",
    Projection: "PROJECTION", Color: "COLOR", NodePath: "NODE_PATH", RID: "RID", ObjectID: "OBJECT",
    Object: "OBJECT", Callable: "CALLABLE", Signal: "SIGNAL", dict: "DICTIONARY",
    TypedDictionary: "DICTIONARY", FrozenDict: "DICTIONARY", list: "ARRAY", TypedArray: "ARRAY",
    tuple: "ARRAY", FrozenTypedArray: "ARRAY", bytes: "PACKED_BYTE_ARRAY", bytearray: "PACKED_BYTE_ARRAY",
    memoryview: "PACKED_BYTE_ARRAY", PackedInt32Array: "PACKED_INT32_ARRAY",
    PackedInt64Array: "PACKED_INT64_ARRAY", PackedFloat32Array: "PACKED_FLOAT32_ARRAY",
    PackedFloat64Array: "PACKED_FLOAT64_ARRAY", PackedStringArray: "PACKED_STRING_ARRAY",
    PackedVector2Array: "PACKED_VECTOR2_ARRAY", PackedVector3Array: "PACKED_VECTOR3_ARRAY",
    PackedColorArray: "PACKED_COLOR_ARRAY", PackedVector4Array: "PACKED_VECTOR4_ARRAY",
}

#: spec type key -> the class the decoder builds (for Struct and Packed layouts)
KEY_CLASSES: dict[str, type] = {
    "VECTOR2": Vector2, "VECTOR2I": Vector2i, "RECT2": Rect2, "RECT2I": Rect2i, "VECTOR3": Vector3,
    "VECTOR3I": Vector3i, "TRANSFORM2D": Transform2D, "VECTOR4": Vector4, "VECTOR4I": Vector4i,
    "PLANE": Plane, "QUATERNION": Quaternion, "AABB": AABB, "BASIS": Basis,
    "TRANSFORM3D": Transform3D, "PROJECTION": Projection, "COLOR": Color,
    "PACKED_INT32_ARRAY": PackedInt32Array, "PACKED_INT64_ARRAY": PackedInt64Array,
    "PACKED_FLOAT32_ARRAY": PackedFloat32Array, "PACKED_FLOAT64_ARRAY": PackedFloat64Array,
    "PACKED_VECTOR2_ARRAY": PackedVector2Array, "PACKED_VECTOR3_ARRAY": PackedVector3Array,
    "PACKED_COLOR_ARRAY": PackedColorArray, "PACKED_VECTOR4_ARRAY": PackedVector4Array,
}


def type_key(value: Any) -> str:
    """The spec type key of a Python value (raises TypeError for values with no Godot type)."""
    key = CLASS_KEYS.get(type(value))
    if key is None:
        for cls, k in CLASS_KEYS.items():
            if isinstance(value, cls) and cls is not type(None):
                return k
        raise TypeError(f"no Godot type for a Python {type(value).__name__}")
    return key


#: Python types that are one Godot type as a Dictionary key (the engine's ``hash_compare``; Godot 4 compares a
#: String and a StringName key as equal)
_KEY_TYPES: dict[type, type] = {WideInt: int, Float32: float, Float64: float, StringName: str}


def key_signature(x: Any) -> Any:
    """What tells Dictionary keys apart in Godot and not in Python: the Godot types of ``x`` and of what it holds
    (``True == 1 == 1.0`` in Python; ``true``, ``1`` and ``1.0`` are three keys in Godot)."""
    t = type(x)
    if t is tuple or t is FrozenTypedArray:  # a frozen Array (typed or not: one key to the engine)
        return tuple(map(key_signature, x))
    if t is FrozenDict:
        return frozenset((k, key_signature(k), key_signature(v)) for k, v in x.items())
    return _KEY_TYPES.get(t, t)


#: key types whose Python hash a message cannot choose (str and bytes hash with a per-process secret, an int is
#: its own hash): the others are counted by :func:`hash_flooded`
SAFE_KEY_TYPES = frozenset({str, int, float, bool, type(None), bytes, WideInt, Float32, Float64, StringName})


def hash_flooded(counts: dict[int, int], key: Any, limit: int) -> bool:
    """Count the hash of ``key`` (a key type not in SAFE_KEY_TYPES) in ``counts``, one Dictionary's: True once more
    than ``limit`` of its keys have that hash (a hash flood: each one would be compared with all the others)."""
    h = hash(key)
    n = counts[h] = counts.get(h, 0) + 1
    return n > limit


def hash_flood_reason(limit: int) -> str:
    return (f"more than {limit} Dictionary keys of one Python hash (a hash flood: Python's dict would take time "
            f"quadratic in them; spec.transports.MAX_KEYS_OF_ONE_HASH)")


def key_clash(stored: dict[Any, Any], key: Any, repeated: bool) -> Any:
    """``key`` has just gone into a dict whose keys ``stored`` maps to themselves (``repeated``: the dict had it
    already): the earlier key Python took it for although Godot keeps the two apart (a Dictionary Python cannot
    hold), or None (a new key, or the engine's own repeated key, whose value replaces the first)."""
    if not repeated:
        stored[key] = key
        return None
    first = stored[key]
    return first if first is not key and key_signature(first) != key_signature(key) else None


def key_clash_reason(key: Any, first: Any) -> str:
    return (f"Dictionary key {key!r:.60} equals the earlier key {first!r:.60} in Python, not in Godot "
            f"(a key of another type)")


def freeze(value: Any) -> Any:
    """Make a decoded value usable as a Python dict key, as Godot allows any Variant as a key.

    Iterative (an explicit stack, no recursion): a key may be nested up to the engine's 1024 levels
    (``Dialect.engine_depth_limit``). Each FrozenDict's hash is taken as it is built, innermost
    first, so hashing a deep key later never recurses through Python either."""
    if not isinstance(value, (list, dict)):
        return value
    # a frame: [items iterator, frozen items so far, is a dict, the key of the value being frozen, element type]
    stack: list[list] = [[iter(value.items()) if isinstance(value, dict) else iter(value), [],
                          isinstance(value, dict), None, getattr(value, "element", None)]]
    while True:
        frame = stack[-1]
        it, out, is_dict = frame[0], frame[1], frame[2]
        for item in it:
            if is_dict:
                frame[3], item = item
            if isinstance(item, (list, dict)):
                stack.append([iter(item.items()) if isinstance(item, dict) else iter(item), [],
                              isinstance(item, dict), None, getattr(item, "element", None)])
                break
            out.append((frame[3], item) if is_dict else item)
        else:
            stack.pop()
            element = frame[4]
            done: Any = FrozenDict(out) if is_dict else tuple(out) if element is None else \
                FrozenTypedArray(element, out)
            if is_dict:
                with suppress(TypeError):  # an unhashable value inside fails where it is a key, as before
                    hash(done)
            if not stack:
                return done
            parent = stack[-1]
            parent[1].append((parent[3], done) if parent[2] else done)
