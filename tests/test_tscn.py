"""Text scenes and resources: files written by the engines themselves, and the examples of the TSCN
format page (the French Godot 3 documentation in the seeds).

The files in tests/data were saved by Godot 3.2.3 and 4.6 (``ResourceSaver.save`` of the scenes the
SCENE3/SCENE4 scripts below build; ``godot4_typed.tres`` adds a script-typed array) except
``seed_godot3.tscn``, which is put together from the seed's examples. The engines judge the values:
every property that is not a resource reference is read by the engine's own parser
(str2var / str_to_var of the text as written in the file) and must print the same as our reading.
The scenes are also saved live, and the loaded properties compared with the live objects.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from godot_dissect import tscn
from godot_dissect import values as V
from godot_dissect.text import TextParseError, from_text, to_text

from .test_text import _gd_string, canon

DATA = Path(__file__).parent / "data"
FILES = {3: ["godot3_scene.tscn", "godot3_holder.tres", "seed_godot3.tscn"],
         4: ["godot4_scene.tscn", "godot4_holder.tres", "godot4_typed.tres"]}

_COMMON = '''var root = Node2D.new()
root.name = "Root"
var spr = {sprite}.new()
spr.name = "Sprite"
spr.position = Vector2(10, 20.5)
spr.modulate = Color(1, 0.5, 0.25)
root.add_child(spr)
spr.owner = root
spr.add_to_group("enemies", true)
var body = StaticBody2D.new()
body.name = "Body"
root.add_child(body)
body.owner = root
var shape = CollisionShape2D.new()
shape.name = "Shape"
var rect = RectangleShape2D.new()
shape.shape = rect
body.add_child(shape)
shape.owner = root
var line = Line2D.new()
line.name = "Line"
line.points = {vec2s}([Vector2(0, 0), Vector2(1.5, -2)])
var curve = Curve.new()
curve.add_point(Vector2(0, 1))
curve.add_point(Vector2(1, 0.25))
line.width_curve = curve
root.add_child(line)
line.owner = root
root.set_meta("note", "héllo \\"quoted\\"\\nline ; not a comment")
var facts = {{"paths": [], "position": spr.position, "modulate": spr.modulate, "points": line.points,
	"curve": curve.get("_data"), "note": root.get_meta("note")}}
for n in [root, spr, body, shape, line]:
	facts["paths"].append(str(root.get_path_to(n)))
var ps = PackedScene.new()
ps.pack(root)
'''
SCENE3 = _COMMON.format(sprite="Sprite", vec2s="PoolVector2Array") + '''rect.extents = Vector2(3, 4)
facts["extents"] = rect.extents
root.set_meta("dict", {"a": [1, 2.5, null], 3: NodePath("Sprite:position")})
facts["dict"] = root.get_meta("dict")
spr.connect("texture_changed", line, "queue_free", [1, "x"], CONNECT_PERSIST)
facts["binds"] = spr.get_signal_connection_list("texture_changed")[0]["binds"]
ps.pack(root)
ResourceSaver.save("user://scene.tscn", ps)
var f = File.new()
f.open("user://scene.tscn", File.READ)
var text = f.get_as_text()
f.close()'''
SCENE4 = _COMMON.format(sprite="Sprite2D", vec2s="PackedVector2Array") + '''rect.size = Vector2(3, 4)
facts["extents"] = rect.size
var td: Dictionary[String, Vector2i] = {"p": Vector2i(1, -1)}
root.set_meta("dict", {"a": [1, 2.5, null], 3: NodePath("Sprite:position"), &"sn": td})
facts["dict"] = root.get_meta("dict")
spr.texture_changed.connect(line.queue_free.bind(1, "x"), CONNECT_PERSIST)
facts["binds"] = [1, "x"]
ps.pack(root)
ResourceSaver.save(ps, "user://scene.tscn")
var text = FileAccess.get_file_as_string("user://scene.tscn")'''


def _has_ref(v: Any) -> bool:
    if isinstance(v, V.ResourceRef):
        return True
    if isinstance(v, V.TypedArray) and v.element.name.startswith(("ExtResource(", "SubResource(")):
        return True
    if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
        return any(_has_ref(x) for x in v)
    if isinstance(v, dict):
        return any(_has_ref(k) or _has_ref(x) for k, x in v.items())
    return False


def _stored_values(family: int) -> list[tuple[str, str, Any]]:
    """(where, text as written, our reading) for every property of the stored files without refs."""
    out = []
    for name in FILES[family]:
        doc = tscn.load(DATA / name)
        for sec in doc.sections:
            for key, value in sec.properties.items():
                if not _has_ref(value):
                    out.append((f"{name}:{sec.line}:{key}", sec.source[key], value))
    return out


_RUNS: dict[int, Any] = {}


@pytest.fixture(scope="module")
def runs() -> Any:
    def get(family: int) -> Any:
        if family not in _RUNS:
            from godot_dissect.engines import EncodeCase, EngineUnavailable, get_engine

            try:
                eng = get_engine(f"godot{family}")
            except EngineUnavailable as e:
                pytest.skip(f"Godot {family} engine unavailable: {e.reason}")
            parse = "str2var" if family == 3 else "str_to_var"
            cases = [EncodeCase("live", "[text, facts]", SCENE3 if family == 3 else SCENE4)]
            cases += [EncodeCase(f"v{i}", f"{parse}({_gd_string(src)})")
                      for i, (_, src, _) in enumerate(_stored_values(family))]
            _RUNS[family] = eng.probe(encode=cases).encoded
        return _RUNS[family]

    return get


@pytest.mark.parametrize("family", [3, 4], ids=["godot3", "godot4"])
def test_stored_values_read_like_the_engine(runs: Any, family: int) -> None:
    encoded = runs(family)
    dialect = f"godot{family}"
    for i, (where, _, value) in enumerate(_stored_values(family)):
        got = encoded[f"v{i}"]
        assert got.ok, where
        assert to_text(value, dialect) == got.text, where


@pytest.mark.parametrize("family", [3, 4], ids=["godot3", "godot4"])
def test_live_scene(runs: Any, family: int) -> None:
    live = runs(family)["live"]
    assert live.ok, live.messages
    dialect = f"godot{family}"
    text, facts = from_text(live.text, dialect)
    scene = tscn.loads(text)
    assert isinstance(scene, tscn.Scene) and scene.dialect == dialect
    assert [scene.node_path(n) for n in scene.nodes] == list(facts["paths"])
    sprite, line, root = scene.node("Sprite"), scene.node("Line"), scene.nodes[0]
    assert sprite is not None and line is not None
    assert canon(sprite.properties["position"]) == canon(facts["position"])
    assert canon(sprite.properties["modulate"]) == canon(facts["modulate"])
    assert canon(line.properties["points"]) == canon(facts["points"])
    meta = root.properties["__meta__"] if family == 3 else {
        k.removeprefix("metadata/"): v for k, v in root.properties.items()}
    assert canon(meta["note"]) == canon(facts["note"])
    assert canon(meta["dict"]) == canon(facts["dict"])
    curve = scene.resolve(line.properties["width_curve"])
    assert curve is not None and curve.attrs["type"] == "Curve"
    assert canon(curve.properties["_data"]) == canon(facts["curve"])
    shape = scene.resolve(scene.node("Body/Shape").properties["shape"])  # type: ignore[union-attr]
    assert shape is not None
    assert canon(shape.properties["extents" if family == 3 else "size"]) == canon(facts["extents"])
    (conn,) = scene.connections
    assert conn.attrs["signal"] == "texture_changed" and conn.attrs["method"] == "queue_free"
    assert canon(conn.attrs["binds"]) == canon(facts["binds"])
    assert sprite.attrs["groups"] == ["enemies"]


# --------------------------------------------------------------------------- without engines


def test_seed_examples() -> None:
    scene = tscn.load(DATA / "seed_godot3.tscn")
    assert isinstance(scene, tscn.Scene) and scene.dialect == "godot3" and scene.format == 2
    assert [s.attrs["path"] for s in scene.ext_resources.values()] == ["res://characters/player.dae", "metal.tres"]
    assert sorted(scene.sub_resources) == [1, 2, 3]
    assert scene.node("Arm/Hand/Finger") is not None and scene.nodes[0].attrs["name"] == "Player"
    mesh = scene.sub_resources[1].properties["surfaces/0"]
    assert mesh["primitive"] == 4 and mesh["arrays"][2:8] == [None] * 6  # "null, ; No Tangents," etc.
    assert isinstance(mesh["arrays"][0], V.PackedVector3Array) and len(mesh["arrays"][0]) == 12
    skeleton = scene.node("Skeleton")
    assert skeleton is not None and skeleton.properties["bones/1/parent"] == 0
    assert scene.node("Arm/mesh").properties["skeleton"] == V.NodePath("..:")  # type: ignore[union-attr]
    anim = scene.sub_resources[3]
    assert anim.properties["tracks/1/path"] == V.NodePath("Armature001/Skeleton:Bone.001")
    assert scene.node("AnimationPlayer").properties["anims/default"] == V.ResourceRef("SubResource", 2)  # type: ignore[union-attr]


def test_resource_files() -> None:
    res = tscn.load(DATA / "godot4_holder.tres")
    assert isinstance(res, tscn.Resource) and res.resource is not None
    ref = res.resource.properties["metadata/gradient"]
    assert res.resolve(ref) is res.sub_resources[ref.id]
    typed = tscn.load(DATA / "godot4_typed.tres").resource
    assert typed is not None
    assert typed.properties["metadata/objs"] == V.TypedArray(V.ContainerType("script", 'ExtResource("1")'), [])


def test_syntax() -> None:
    text = '''; a comment first
[gd_resource type="Resource" format=3 uid="uid://abc"] ; trailing comment
[resource]
"quoted key" = 1
a / b = [1,
  2]  ; after a value
tracks/0/keys = { "times": PackedFloat32Array(0, 1),
"values": [Vector3(0, 0, 0), Vector3(1, 1, 1)] }
[sub.Android]
x=Quat(0,0,0,1)
'''
    res = tscn.loads(text)
    props = res.sections[1].properties
    assert props["quoted key"] == 1 and props["a/b"] == [1, 2]
    assert res.sections[1].source["a/b"] == "[1,\n  2]"
    assert res.sections[2].tag == "sub.Android"
    assert res.sections[2].properties["x"] == V.Quaternion(0, 0, 0, 1)
    assert res.descriptor.attrs["uid"] == "uid://abc"


def test_errors_point_at_the_line() -> None:
    with pytest.raises(TextParseError, match="line 1"):
        tscn.loads("x = 1\n[gd_scene format=2]")
    with pytest.raises(TextParseError) as e:
        tscn.loads('[gd_scene format=3]\n\n[node name="A"]\npos = Vector2(1, \n')
    assert e.value.line == 5
    with pytest.raises(TextParseError, match="line 2"):
        tscn.loads('[gd_scene format=3]\n[node name="A" 5]')
