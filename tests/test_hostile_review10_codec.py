"""Hostile review 10, the codec's area: hand-built inputs that made the codec lose data, hang or crash.

* The JSON form read back (``jsonform.loads``, ``godot-dissect encode --json``): a flat form whose nodes share
  a child (40 nodes of two references each are 2**40 elements to write), refer back (a cycle, read as null),
  JSON nested past Python's recursion limit, and forms with a field of the wrong kind: each a ValueError
  naming the reason, never a hang, RecursionError or traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from godot_dissect import jsonform
from godot_dissect.codec.decoder import decode
from godot_dissect.fuzz import hostile

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
