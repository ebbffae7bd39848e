"""What a typed container does with an element of another type (Godot 4.3+ decoding).

The engine pushes each decoded element into the typed container: elements of the right type are
kept, elements ``Variant::can_convert_strict`` allows are converted, and any other element is
dropped (the engine prints "Attempted to push_back a variable of type ..."). Typed Dictionaries
check their keys that way (a key that does not fit drops its entry) and, in 4.6, keep values as
sent. Object-typed containers keep only null and objects; without allow_objects their class
becomes ``EncodedObjectAsID``.
"""

from __future__ import annotations

#: to-type key -> from-type keys whose values convert (subset of Variant::can_convert_strict)
STRICT_CONVERSIONS: dict[str, frozenset[str]] = {
    "BOOL": frozenset({"INT", "FLOAT"}),
    "INT": frozenset({"BOOL", "FLOAT"}),
    "FLOAT": frozenset({"BOOL", "INT"}),
    "STRING": frozenset({"STRING_NAME", "NODE_PATH"}),
    "STRING_NAME": frozenset({"STRING"}),
    "NODE_PATH": frozenset({"STRING"}),
    "VECTOR2": frozenset({"VECTOR2I"}),
    "VECTOR2I": frozenset({"VECTOR2"}),
    "VECTOR3": frozenset({"VECTOR3I"}),
    "VECTOR3I": frozenset({"VECTOR3"}),
    "VECTOR4": frozenset({"VECTOR4I"}),
    "VECTOR4I": frozenset({"VECTOR4"}),
    "RECT2": frozenset({"RECT2I"}),
    "RECT2I": frozenset({"RECT2"}),
}

#: class name every Object-typed container gets when objects are not allowed
OBJECT_AS_ID_CLASS = "EncodedObjectAsID"
