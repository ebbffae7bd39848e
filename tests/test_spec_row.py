"""``spec.row.row`` behaves as ``@dataclass(frozen=True)`` does (the standard library's class is the oracle):
equality, hash, repr, immutability, ``dataclasses.replace`` / ``fields`` / ``asdict``, pickling, on twin classes
and on every row of the spec's own tables."""

from __future__ import annotations

import copy
import dataclasses
import importlib
import pickle
from dataclasses import FrozenInstanceError, dataclass, field

import pytest
from hypothesis import given
from hypothesis import strategies as st

from godot_dissect.spec.row import row

SPEC_MODULES = ("dialects", "enet", "enet_compressions", "kinds", "layouts", "multiplayer", "record_fields",
                "transports", "types", "words")


def _twins() -> tuple[type, type]:
    def body() -> dict:
        return {"__annotations__": {"a": "int", "b": "str", "c": "tuple", "hidden": "int"}, "b": "x",
                "c": field(default=()), "hidden": field(default=0, repr=False, compare=False),
                "__module__": __name__, "__qualname__": "Twin"}
    return dataclass(frozen=True)(type("Twin", (), body())), row(type("Twin", (), body()))


Frozen, Row = _twins()
values = st.tuples(st.integers(), st.text(max_size=5), st.tuples(st.integers()), st.integers())


@given(values, values)
def test_a_row_compares_hashes_and_prints_as_a_frozen_dataclass(x: tuple, y: tuple) -> None:
    fx, fy, rx, ry = Frozen(*x), Frozen(*y), Row(*x), Row(*y)
    assert (rx == ry) == (fx == fy) and (rx != ry) == (fx != fy)
    assert hash(rx) == hash(fx) and repr(rx) == repr(fx)
    assert rx.__eq__(fx) is NotImplemented and rx != x  # another class (or a tuple) is never equal
    assert dataclasses.replace(rx, a=y[0]) == Row(y[0], *x[1:])
    assert dataclasses.astuple(rx) == dataclasses.astuple(fx) and dataclasses.asdict(rx) == dataclasses.asdict(fx)
    assert [f.name for f in dataclasses.fields(rx)] == [f.name for f in dataclasses.fields(fx)]
    assert Row.__match_args__ == Frozen.__match_args__ and dataclasses.is_dataclass(rx)


def test_a_row_cannot_be_changed_once_made() -> None:
    for obj in (Frozen(1), Row(1)):
        for name in ("a", "b", "new"):
            with pytest.raises(FrozenInstanceError, match=f"cannot assign to field '{name}'"):
                setattr(obj, name, 2)
        with pytest.raises(FrozenInstanceError, match="cannot delete field 'a'"):
            del obj.a
        assert obj.a == 1 and obj.b == "x"


def _hash(obj: object) -> int | str:
    try:
        return hash(obj)
    except TypeError as e:
        return str(e)


def test_every_row_of_the_spec_is_frozen_comparable_and_pickles() -> None:
    seen = 0
    for name in SPEC_MODULES:
        module = importlib.import_module(f"godot_dissect.spec.{name}")
        found = [v for v in vars(module).values() if dataclasses.is_dataclass(v) and not isinstance(v, type)]
        found += [e for v in vars(module).values() if isinstance(v, tuple) for e in v
                  if dataclasses.is_dataclass(e) and not isinstance(e, type)]
        for obj in found:
            cls = type(obj)
            assert cls.__setattr__ is Row.__setattr__, cls  # declared with @row
            twin = dataclass(frozen=True)(type(cls.__name__, (), {
                "__annotations__": {f.name: f.type for f in dataclasses.fields(obj)},
                "__qualname__": cls.__qualname__}))(**{f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)})
            assert repr(obj) == repr(twin), obj
            assert _hash(obj) == _hash(twin), obj  # a row holding a mapping is unhashable, as the dataclass is
            assert dataclasses.replace(obj) == obj
            if isinstance(_hash(twin), int):  # (a mapping proxy pickles no more than it hashes)
                assert pickle.loads(pickle.dumps(obj)) == obj == copy.deepcopy(obj)
            with pytest.raises(FrozenInstanceError):
                object.__getattribute__(obj, "__setattr__")("kind", None)
            seen += 1
    assert seen > 100
