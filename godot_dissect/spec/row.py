"""``@row``: how the spec declares its tables' rows — a frozen dataclass, cheaper to define.

``@dataclass(frozen=True)`` compiles six methods per class (``__init__``, ``__repr__``, ``__eq__``,
``__hash__``, ``__setattr__``, ``__delattr__``): about 3.4 M instructions a class, and the spec has dozens,
all defined when ``godot-dissect read`` starts. ``@row`` lets dataclasses compile only ``__init__`` and
gives every row class the same five shared methods, which behave as the generated ones do: equal when of
the same class with equal fields, hashed by the tuple of fields, ``Name(field=value, ...)`` as repr, and
no field assignable or deletable once ``__init__`` has set it (``FrozenInstanceError``).
``dataclasses.fields``, ``replace``, ``asdict`` and ``is_dataclass`` work on rows unchanged.
"""

from __future__ import annotations

import reprlib
from dataclasses import FrozenInstanceError, dataclass, fields
from typing import Any, TypeVar

__all__ = ["row"]

T = TypeVar("T", bound=type)


def _values(self: Any, flag: str) -> tuple:
    return tuple(getattr(self, f.name) for f in fields(self) if getattr(f, flag))


def _eq(self: Any, other: object) -> bool:
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _values(self, "compare") == _values(other, "compare")


def _hash(self: Any) -> int:
    return hash(tuple(getattr(self, f.name) for f in fields(self) if (f.compare if f.hash is None else f.hash)))


@reprlib.recursive_repr()
def _repr(self: Any) -> str:
    shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if f.repr)
    return f"{self.__class__.__qualname__}({shown})"


def _setattr(self: Any, name: str, value: Any) -> None:
    # __init__ (a plain dataclass one) sets each field once; nothing else is ever assigned
    if name in self.__dict__ or name not in self.__dataclass_fields__:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")
    object.__setattr__(self, name, value)


def _delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def row(cls: T) -> T:
    """A frozen dataclass of ``cls`` (same fields, defaults, ``__init__``, comparison, hash, repr)."""
    cls = dataclass(eq=False, repr=False)(cls)
    cls.__eq__, cls.__hash__, cls.__repr__ = _eq, _hash, _repr  # type: ignore[assignment,method-assign]
    cls.__setattr__, cls.__delattr__ = _setattr, _delattr  # type: ignore[assignment,method-assign]
    return cls
