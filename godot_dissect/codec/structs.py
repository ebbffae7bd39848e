"""Compile a Struct layout's field paths into a builder and a flattener for its value class.

``("basis.x.y", ...)`` becomes ``lambda t: Transform3D(Basis(Vector3(t[0], ...)...)...)`` once per
type at import, so decoding a math value is one ``unpack_from`` and one call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _tree(cls: type, prefix: str, index: dict[str, int], ns: dict[str, Any]) -> str:
    ns[cls.__name__] = cls
    parts = []
    for name in cls._fields:  # type: ignore[attr-defined]
        path = prefix + name
        default = cls._field_defaults.get(name)  # type: ignore[attr-defined]
        if isinstance(default, tuple):
            parts.append(_tree(type(default), path + ".", index, ns))
        else:
            parts.append(f"t[{index[path]}]")
    return f"_new({cls.__name__}, ({', '.join(parts)},))"


def compile_builder(cls: type, paths: tuple[str, ...]) -> Callable[[tuple], Any]:
    """flat tuple in wire order -> value of ``cls``"""
    ns: dict[str, Any] = {"_new": tuple.__new__}  # skips the float coercion: wire values are floats
    src = _tree(cls, "", {p: i for i, p in enumerate(paths)}, ns)
    return eval(f"lambda t: {src}", ns)  # noqa: S307 - source generated from the spec's field paths


def compile_flattener(paths: tuple[str, ...]) -> Callable[[Any], tuple]:
    """value -> flat tuple in wire order"""
    return eval("lambda v: (" + "".join(f"v.{p}, " for p in paths) + ")")  # noqa: S307
