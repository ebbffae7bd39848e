"""Every Godot value and every record pickles (process pools and Dask ship them between processes)."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from godot_dissect import jsonform
from godot_dissect import values as V
from godot_dissect.codec import encode
from godot_dissect.pcap.reader import read_pcap
from godot_dissect.spec import DIALECT_NAMES

from .strategies import text, values

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = sorted((ROOT / "captures").rglob("*.pcap*"))


def _same(a: object, b: object) -> None:
    """Same classes all the way down and the same lossless JSON form (NaN-safe, width-aware)."""
    assert type(a) is type(b)
    assert jsonform.dumps(a) == jsonform.dumps(b)


def _objects(dialect: str) -> st.SearchStrategy:
    """Values the shared strategies leave out: full Objects, Dictionary keys that are containers,
    float32 NaN, typed Dictionaries with one untyped side."""
    inner = values(dialect)
    return st.one_of(
        st.tuples(text, st.dictionaries(text, inner, max_size=3)).map(lambda t: V.Object(*t)),
        st.lists(st.lists(st.integers(0, 9), max_size=3), max_size=3).map(
            lambda keys: {V.freeze(k): i for i, k in enumerate(keys)}),
        st.just(V.Float32(float("nan"))),
        st.dictionaries(text, st.integers(0, 9), max_size=3).map(
            lambda m: V.TypedDictionary(None, V.ContainerType("builtin", "int"), m)),
    )


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_every_value_pickles(dialect: str, data: st.DataObject) -> None:
    value = data.draw(st.one_of(values(dialect), _objects(dialect)))
    for protocol in (2, pickle.HIGHEST_PROTOCOL):
        back = pickle.loads(pickle.dumps(value, protocol))
        _same(back, value)
        if not isinstance(value, V.Object):  # Objects have no binary form in every dialect
            try:
                wire = encode(value, dialect)
            except Exception:  # noqa: BLE001 - a value this dialect cannot send: the JSON check above holds
                continue
            assert encode(back, dialect) == wire


def test_node_path_pickles() -> None:
    p = V.NodePath("/Game/World/Player:position:x")
    back = pickle.loads(pickle.dumps(p))
    assert back == p and str(back) == "/Game/World/Player:position:x" and back.absolute
    with pytest.raises(AttributeError):
        back.names = ()  # still immutable after the round trip


def test_container_keys_hash_in_another_process() -> None:
    """A Dictionary keyed by a container unpickled where str hashes differ (another hash seed)."""
    d = {V.freeze(["a", {"b": 1}]): "found"}
    hash(next(iter(d)))  # cache the hash in this process
    code = ("import pickle, sys; from godot_dissect import values as V; "
            "d = pickle.loads(sys.stdin.buffer.read()); print(d[V.freeze(['a', {'b': 1}])])")
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(d), capture_output=True, env=env,
                         check=True)
    assert out.stdout.decode().strip() == "found"


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: p.name)
def test_every_record_pickles(capture: Path) -> None:
    records = list(read_pcap(str(capture)))
    assert records
    back = pickle.loads(pickle.dumps(records))
    assert [r.to_json() for r in back] == [r.to_json() for r in records]
