"""The generated Wireshark Lua dissector (lua/godot.lua) in real tshark, at parity with the Python reader.

One tshark run per pcap: every case of a kind (engine vectors, malformed mutants, messages of a
capture) is one packet of one capture, and each run's JSON is compared frame by frame with what
``godot_dissect.pcap.reader.read_pcap`` makes of the same file. The comparison walks the tshark tree
(``-T json`` read with duplicate keys kept, in order) and the Python values into the same normal form:
type names, values, keys, typed-container info, debugger message names and arguments. The default
tree, whose Dictionary entries carry their String keys in their labels only, is read from ``-T pdml``
(which has the labels) into the same form.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import random
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from godot_dissect import values as V
from godot_dissect.codec import decode_prefix, encode
from godot_dissect.codec.structs import compile_flattener
from godot_dissect.errors import DecodeError
from godot_dissect.fuzz import hostile
from godot_dissect.fuzz.malformed import malformed_corpus
from godot_dissect.fuzz.pcapout import PcapWriter
from godot_dissect.lua.generator import COMMITTED, generate
from godot_dissect.pcap.packets import segments
from godot_dissect.pcap.reader import read_pcap
from godot_dissect.spec import get_dialect

from .oracle_cases import cases_for
from .resegment import _PcapWriter, all_in_one, cut_start, duplicated_and_reordered, one_byte, resegment

ROOT = Path(__file__).resolve().parent.parent
LUA = ROOT / "lua" / "godot.lua"
CAPTURES = ROOT / "captures"
MANIFEST = json.loads((CAPTURES / "manifest.json").read_text())
# SceneMultiplayer packets are not plain Variants (another issue)
NAMES = sorted(n for n in MANIFEST if "multiplayer" not in n and "enet" not in n)  # Variant captures only
TCP_NAMES = [n for n in NAMES if "tcp" in json.dumps(MANIFEST[n]["flows"])]

pytestmark = pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")

#: show everything the comparison needs: full Dictionary keys, all packed elements, every level
FULL = ("-o", "godot.details:TRUE", "-o", "godot.packed_limit:1000000", "-o", "godot.max_depth:200")
#: the default tree, with every packed element and level shown
ALL_SHOWN = ("-o", "godot.packed_limit:1000000", "-o", "godot.max_depth:200")
#: pairs in the normal form of the tree read from PDML: a Variant item's label, and a Dictionary
#: entry's key as that label shows it
LABEL, KEY_LABEL = "(label)", "(key in label)"
#: the value fields that are the items of bool, int, float and String Variants in the default tree
LEAF_FIELDS = ("godot.bool", "godot.int", "godot.float", "godot.string")
#: fields without a value (ProtoField.none)
NONE_FIELDS = ("godot.debugger.args", "godot.more")


# -- running tshark ---------------------------------------------------------------------------------

def tshark(pcap: Path | str, *args: str, script: Path = LUA) -> str:
    """tshark with the dissector; fails on a load error (tshark itself exits 0 then) or a Lua error."""
    r = subprocess.run(["tshark", "-n", "-X", f"lua_script:{script}", "-r", str(pcap), *args],
                       capture_output=True, text=True, errors="replace", timeout=600)
    assert r.returncode == 0, r.stderr
    assert "Lua:" not in r.stderr and "lua_script" not in r.stderr, r.stderr
    assert "Lua Error" not in r.stdout, [line for line in r.stdout.splitlines() if "Lua Error" in line][:5]
    return r.stdout


def json_frames(out: str, layer: str = "godot") -> dict[int, list[list]]:
    """frame number -> the `layer` protocol items of that frame (each a list of (key, value) pairs)."""
    frames: dict[int, list[list]] = {}
    for pkt in json.loads(out, object_pairs_hook=list):
        layers = dict(dict(pkt)["_source"])["layers"]
        number = int(dict(dict(layers)["frame"])["frame.number"])
        frames[number] = [v for k, v in layers if k == layer]
    return frames


def tshark_json(pcap: Path | str, *args: str, script: Path = LUA) -> dict[int, list[list]]:
    return json_frames(tshark(pcap, "-T", "json", "-J", "frame godot", *args, script=script))


def _pdml_pairs(elem: ET.Element) -> list:
    """A PDML element's fields as the pairs ``-T json`` makes: (name, value), then (name_tree, fields)
    for a field with fields inside (or (name, fields) when it has no value). A Dictionary entry whose
    String key is in its label ('"name" → int: 5') gets that key as a first pair (KEY_LABEL, text)."""
    out: list = []
    for f in elem.findall("field"):
        name, show, label = f.get("name") or "", f.get("show") or "", f.get("showname") or ""
        kids = _pdml_pairs(f)
        if name == "godot.type" or name in LEAF_FIELDS:
            kids.insert(0, (LABEL, label))
            if label.startswith('"'):
                kids.insert(0, (KEY_LABEL, label[1:label.index('" → ')]))
        if kids and name in NONE_FIELDS:  # -T json shows a field without a value as its fields
            out.append((name, kids))
            continue
        out.append((name, show))
        if kids:
            out.append((name + "_tree", kids))
    return out


def tshark_pdml(pcap: Path | str, *args: str) -> dict[int, list[list]]:
    """frame number -> the godot protocol items of that frame, from ``-T pdml``, as json_frames has them."""
    frames: dict[int, list[list]] = {}
    for packet in ET.fromstring(tshark(pcap, "-T", "pdml", *args)).iter("packet"):
        protos = packet.findall("proto")
        number = next(int(f.get("show") or 0) for p in protos if p.get("name") == "frame"
                      for f in p.iter("field") if f.get("name") == "frame.number")
        frames[number] = [_pdml_pairs(p) for p in protos if p.get("name") == "godot"]
    return frames


# -- the tshark tree in normal form ------------------------------------------------------------------



def _node_spans(pairs: list) -> list[tuple[int, int, tuple[Any, list]]]:
    """The Variant items in a pair list, in order: (first pair, pair after, (type, subtree pairs)).
    The type is a type id (a godot.type item) or, for a leaf of the default tree (a value field with
    its label, read from PDML), the field's name; the subtree of a leaf starts with its value."""
    out = []
    for i, (k, v) in enumerate(pairs):
        has_tree = i + 1 < len(pairs) and pairs[i + 1][0] == k + "_tree"
        tree = pairs[i + 1][1] if has_tree else []
        if k == "godot.type":
            out.append((i, i + 1 + has_tree, (int(v), tree)))
        elif k in LEAF_FIELDS and _fields(tree, LABEL):
            out.append((i, i + 1 + has_tree, (k, [(k, v), *tree])))
    return out


def _nodes(pairs: list) -> list[tuple[Any, list]]:
    return [node for _, _, node in _node_spans(pairs)]


def _leaf_entry(dialect: Any, field: str, tree: list) -> Any:
    """The type of a default-tree leaf: the dialect's one type that has this value field, or for
    godot.string, String or StringName as the label says (the text before the quoted value)."""
    label = _fields(tree, LABEL)[0]
    kinds = {"godot.bool": ("bool",), "godot.int": ("number",), "godot.float": ("number",),
             "godot.string": ("string",)}[field]
    candidates = [e for e in dialect.entries if e.typedef.layout.kind in kinds
                  and (e.typedef.layout.kind != "number" or (e.key == "INT") == (field == "godot.int"))]
    if len(candidates) > 1:  # the label ends in Name: "text" (quotes inside the text are escaped)
        lead = label[:label.rindex('"', 0, len(label) - 1)]
        candidates = [e for e in candidates if lead.endswith(e.name + ": ")]
    assert len(candidates) == 1, (field, label)
    return candidates[0]


def _fields(tree: list, name: str) -> list:
    return [v for k, v in tree if k == name]


def _has(tree: Any, key: str) -> bool:
    if isinstance(tree, list):
        return any((isinstance(p, (list, tuple)) and len(p) == 2 and (p[0] == key or _has(p[1], key))) for p in tree)
    return False


def _float(s: str) -> str:
    return "nan" if s in ("nan", "-nan") else s


def _g7(x: Any) -> str:
    """A number to 7 significant digits: labels show 32-bit floats so (64-bit ones with 15)."""
    return format(float(x), ".7g")


def lua_value(dialect: Any, node: tuple[Any, list]) -> Any:
    tid, tree = node
    entry = dialect.entries[tid] if isinstance(tid, int) else _leaf_entry(dialect, tid, tree)
    layout = entry.typedef.layout
    kind, name = layout.kind, entry.name
    if kind == "empty":
        return (name,)
    if kind == "bool":
        return (name, _fields(tree, "godot.bool")[0] not in ("0", "False", "false"))
    if kind == "number":
        ints = _fields(tree, "godot.int")
        return (name, int(ints[0])) if ints else (name, _float(_fields(tree, "godot.float")[0]))
    if kind == "string":
        return (name, _fields(tree, "godot.string")[0])
    if kind == "struct":
        comps = _fields(tree, "godot.component")
        if not comps and _fields(tree, LABEL):  # the default tree: the components are in the label only
            comps = _fields(tree, LABEL)[0].rsplit(": (", 1)[1].rstrip(")").split(", ")
            return (name, tuple(_g7(c) for c in comps))
        if layout.component.code == "i":
            return (name, tuple(str(int(float(c))) for c in comps))
        return (name, tuple(_float(c) for c in comps))
    if kind == "node_path":
        return (name, _fields(tree, "godot.nodepath")[0])
    if kind == "id64":
        return (name, int(_fields(tree, "godot.id")[0]))
    if kind == "signal":
        return (name, _fields(tree, "godot.string")[0], int(_fields(tree, "godot.id")[0]))
    if kind == "object":
        ids = _fields(tree, "godot.id")
        if ids:
            return (name, "id", int(ids[0]))
        cls = _fields(tree, "godot.class")
        props = tuple((_fields(n[1], "godot.property")[0], lua_value(dialect, n)) for n in _nodes(tree))
        return (name, cls[0] if cls else "", props)
    if kind == "container":
        types = tuple(_fields(tree, "godot.container_type"))
        kids = _nodes(tree)
        if not layout.pairs:
            return (name, types, tuple(lua_value(dialect, k) for k in kids))
        items = []
        for vtid, vtree in kids:  # each pair: the value's item, its key's item first inside (or its label)
            vtree = list(vtree)
            labels = _fields(vtree, KEY_LABEL)
            if labels:
                items.append((("label", labels[0]), lua_value(dialect, (vtid, vtree))))
                continue
            start, stop, key = _node_spans(vtree)[0]
            del vtree[start:stop]
            items.append((lua_value(dialect, key), lua_value(dialect, (vtid, vtree))))
        return (name, types, tuple(items))
    if kind == "packed_bytes":
        b = _fields(tree, "godot.bytes")
        return (name, b[0].replace(":", "") if b else "")
    if kind == "packed_strings":
        return (name, tuple(_fields(tree, "godot.string")))
    if kind == "packed":
        if layout.width > 1:
            return (name, tuple(_fields(tree, "godot.element")))
        if layout.component.code in "iIqQ":
            return (name, tuple(int(v) for v in _fields(tree, "godot.int")))
        return (name, tuple(_float(v) for v in _fields(tree, "godot.float")))
    raise AssertionError(f"unknown layout kind {kind}")


def lua_messages(items: list[list]) -> list[tuple]:
    """The messages of one frame, as (kind, dialect, debugger name, value); debugger parts skipped."""
    out = []
    for m in items:
        if _fields(m, "godot.part"):
            continue  # a segment of a long message the plugin did not reassemble (kept ones have no godot item)
        dialect = get_dialect(_fields(m, "godot.dialect")[-1])
        name = _fields(m, "godot.debugger.message")
        args = [v for k, v in m if k == "godot.debugger.args"]
        if _fields(m, "godot.debugger.part") and not args:
            continue  # a Godot 3 debugger message before its last PDU
        if _fields(m, "godot.error"):
            out.append(("error", dialect.name, name[0] if name else None))
        elif args:
            vals = args[0] if isinstance(args[0], list) else []
            out.append(("debugger", dialect.name, name[0], tuple(lua_value(dialect, n) for n in _nodes(vals))))
        else:
            roots = _nodes(m)
            out.append(("debugger" if name else "variant", dialect.name, name[0] if name else None,
                        lua_value(dialect, roots[0])))
    return out


def provisional(items: list[list]) -> bool:
    return any("provisional" in v for m in items for k, v in _walk(m) if k == "godot.evidence")


def _walk(pairs: list):
    for k, v in pairs:
        yield k, v
        if isinstance(v, list):
            yield from _walk(v)


# -- the Python reader's records in the same normal form ---------------------------------------------

def _f15(x: float) -> str:
    return f"{x:.15g}"


def _no_surrogates(s: str) -> str:
    return "".join("\ufffd" if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in s)


def _text(s: str, pdml: bool) -> str:
    s = _no_surrogates(s)
    return "".join(" " if ord(ch) < 32 or ord(ch) == 127 else ch for ch in s) if pdml else s


def _label_key(s: str) -> str:
    """A String key as an entry's label shows it (the README's rule): 40 bytes at most (cut at a
    character, then …), control characters, quotes and backslashes as \\xNN."""
    b = _no_surrogates(s).encode()
    if len(b) > 40:
        cut = 40
        while cut > 1 and b[cut] & 0xC0 == 0x80:
            cut -= 1
        b = b[:cut] + "…".encode()
    return "".join(f"\\x{c:02x}" if c < 32 or c == 127 or c in b'"\\' else chr(c) for c in b).encode(
        "latin-1").decode()


def py_value(dialect: Any, v: Any, pdml: bool = False) -> Any:
    """`pdml`: as the default tree read from PDML has them: String Dictionary keys as the entries'
    labels show them, math values to the labels' precision, control characters in strings as spaces
    (PDML's rule)."""
    entry = dialect.by_key(V.type_key(v))
    layout = entry.typedef.layout
    kind, name = layout.kind, entry.name
    if kind == "empty":
        return (name,)
    if kind == "bool":
        return (name, bool(v))
    if kind == "number":
        return (name, int(v)) if entry.key == "INT" else (name, _f15(v))
    if kind in ("string", "node_path"):  # Godot 3 keeps lone surrogates; Wireshark shows U+FFFD
        return (name, _text(str(v), pdml))
    if kind == "struct":
        flat = compile_flattener(layout.fields)(v)
        if pdml:
            return (name, tuple(_g7(x) for x in flat))
        return (name, tuple(str(int(x)) if layout.component.code == "i" else _f15(x) for x in flat))
    if kind == "id64":
        return (name, v.id)
    if kind == "signal":
        return (name, _text(v.name, pdml), v.object_id)
    if kind == "object":
        if isinstance(v, V.ObjectID):
            return (name, "id", v.id)
        if v is None:
            return (name, "", ())
        return (name, v.class_name, tuple((k, py_value(dialect, x, pdml)) for k, x in v.properties.items()))
    if kind == "container":
        types: tuple = ()
        if isinstance(v, V.TypedArray) and v.element is not None:
            types = (f"{v.element.kind} {v.element.name}",)
        if isinstance(v, V.TypedDictionary):
            types = tuple(f"{t.kind} {t.name}" for t in (v.key_type, v.value_type) if t is not None)
        if layout.pairs:
            return (name, types, tuple((_py_key(dialect, k, pdml), py_value(dialect, x, pdml))
                                       for k, x in v.items()))
        return (name, types, tuple(py_value(dialect, x, pdml) for x in v))
    if kind == "packed_bytes":
        return (name, bytes(v).hex())
    if kind == "packed_strings":
        return (name, tuple(_text(x, pdml) for x in v))
    if kind == "packed":
        if layout.width > 1:
            fmt = ".15g" if v.array.typecode == "d" else ".7g"  # 64-bit elements (the header flag)
            return (name, tuple("(" + ", ".join(format(x, fmt) for x in el) + ")" for el in v))
        if layout.component.code in "iIqQ":
            return (name, tuple(int(x) for x in v))
        return (name, tuple(_f15(x) for x in v))
    raise AssertionError(f"unknown layout kind {kind}")


def _py_key(dialect: Any, k: Any, pdml: bool) -> Any:
    if pdml and dialect.by_key(V.type_key(k)).typedef.layout.kind == "string":
        return ("label", _label_key(str(k)))
    return py_value(dialect, k, pdml)


def _editor_command(r: Any, dialect: Any) -> bool:
    """A Godot 3 editor command ([name, args...] in one PDU) rather than an assembled game message."""
    try:
        v, used = decode_prefix(r.raw, dialect, allow_objects=True)
    except DecodeError:
        return False
    return used == len(r.raw) and isinstance(v, list) and bool(v) and v[0] == r.message


def py_messages(path: Path | str, pdml: bool = False, **kw: Any) -> dict[int, list[tuple]]:
    """frame number -> the messages the Python reader reads there; `pdml`: see py_value."""
    by_frame: dict[int, list[tuple]] = defaultdict(list)
    value = functools.partial(py_value, pdml=pdml)
    for r in read_pcap(str(path), **kw):
        if r.kind == "text":
            continue  # WebSocket text messages: the websocket dissector's business
        if r.kind == "error":
            by_frame[r.frame].append(("error", r.dialect, r.message))
            continue
        d = get_dialect(r.dialect)
        if r.kind == "variant":
            by_frame[r.frame].append(("variant", r.dialect, None, value(d, r.value)))
        elif d.family >= 4:
            whole = [r.message, r.thread, r.value] if r.thread is not None else [r.message, r.value]
            by_frame[r.frame].append(("debugger", r.dialect, r.message, value(d, whole)))
        elif _editor_command(r, d):
            by_frame[r.frame].append(("debugger", r.dialect, r.message, value(d, [r.message, *r.value])))
        else:
            by_frame[r.frame].append(("debugger", r.dialect, r.message, tuple(value(d, a) for a in r.value)))
    return by_frame


def differences(lua: dict[int, list[list]], py: dict[int, list[tuple]], loose_provisional: bool = False) -> list[str]:
    out = []
    for f in sorted(set(lua) | set(py)):
        got, want = lua_messages(lua.get(f, [])), py.get(f, [])
        if loose_provisional and provisional(lua.get(f, [])):
            got = [(m[0], "?", *m[2:]) for m in got]
            want = [(m[0], "?", *m[2:]) for m in want]
        if got != want:
            out.append(f"frame {f}:\n  tshark {str(got)[:400]}\n  python {str(want)[:400]}")
    return out


def assert_parity(lua: dict[int, list[list]], py: dict[int, list[tuple]], **kw: Any) -> None:
    diff = differences(lua, py, **kw)
    assert not diff, f"{len(diff)} frames differ:\n" + "\n".join(diff[:10])
    assert sum(len(v) for v in py.values()) > 0


# -- the generator and the CLI ----------------------------------------------------------------------

def test_committed_file_is_what_the_spec_generates() -> None:
    r = subprocess.run([sys.executable, "-m", "godot_dissect", "lua", "--check"], capture_output=True, text=True,
                       cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert COMMITTED == LUA and LUA.read_text() == generate()


def test_check_fails_on_a_stale_file(tmp_path: Path) -> None:
    stale = tmp_path / "godot.lua"
    stale.write_text(generate().replace('"Vector3"', '"Vektor3"', 1))
    r = subprocess.run([sys.executable, "-m", "godot_dissect", "lua", "--check", "-o", str(stale)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 1 and "differs" in r.stderr


def test_lua_5_2_syntax() -> None:
    luac = shutil.which("luac5.2")
    if luac is None:
        pytest.skip("luac5.2 not installed (apt-get install lua5.2)")
    for path in (LUA, ROOT / "godot_dissect" / "lua" / "engine.lua"):
        r = subprocess.run([luac, "-p", str(path)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    # no globals written (a plugin shares Wireshark's Lua state with every other plugin)
    listing = subprocess.run([luac, "-l", "-p", str(LUA)], capture_output=True, text=True).stdout
    assert "SETTABUP" not in "\n".join(line for line in listing.splitlines() if "_ENV" in line)


def test_install_copies_into_the_personal_plugin_folder(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    r = subprocess.run([sys.executable, "-m", "godot_dissect", "lua", "--install"], capture_output=True, text=True,
                       cwd=ROOT, env={**env, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr
    target = tmp_path / ".local" / "lib" / "wireshark" / "plugins" / "godot.lua"
    assert str(target) in r.stdout and target.read_text() == generate()
    # Wireshark finds it there: the protocol, its fields and its heuristics are listed
    out = subprocess.run(["tshark", "-G", "heuristic-decodes"], capture_output=True, text=True, env=env).stdout
    assert {"udp\tgodot\tT", "tcp\tgodot\tT", "ws\tgodot\tT"} <= set(out.splitlines())
    fields = subprocess.run(["tshark", "-G", "fields"], capture_output=True, text=True, env=env).stdout
    for name in ("godot.type", "godot.flags", "godot.bool", "godot.int", "godot.float", "godot.string",
                 "godot.nodepath", "godot.count", "godot.len", "godot.debugger.message"):
        assert f"\t{name}\t" in fields, name


def test_a_type_added_to_the_spec_is_decoded_with_no_other_edit(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The generator is a projection: a new type id in the table is a new type in Wireshark."""
    from godot_dissect.lua import generator as gen
    from godot_dissect.spec import dialects as D
    from godot_dissect.spec import types as T

    g4 = D.DIALECTS["godot4"]
    extra = D.TypeEntry(len(g4.entries), "Vector2s", dataclasses.replace(T.VECTOR2I, key="VECTOR2S"))
    monkeypatch.setitem(gen.DIALECTS, "godot4", dataclasses.replace(g4, entries=g4.entries + (extra,)))
    script = tmp_path / "godot.lua"
    script.write_text(gen.generate())
    pcap = tmp_path / "new.pcap"
    w = _PcapWriter(str(pcap))
    payload = len(g4.entries).to_bytes(4, "little") + bytes.fromhex("0700000009000000")
    w.udp("127.0.0.1", 5000, "127.0.0.1", 4242, payload)
    w.close()
    out = tshark(pcap, "-o", "godot.udp_ports:4242", "-o", "godot.dialect:godot4", "-V", script=script)
    assert "Vector2s: (7, 9)" in out


# -- real captures -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_capture_at_parity_with_the_python_reader(name: str) -> None:
    """Every frame: the same messages, dialects, types and values (two passes: the dialect is decided
    with hindsight, as the Python reader does)."""
    pcap = CAPTURES / MANIFEST[name]["pcap"]
    assert_parity(tshark_json(pcap, "-2", *FULL), py_messages(pcap))


@pytest.mark.parametrize("name", NAMES)
def test_default_tree_at_parity_with_the_python_reader(name: str) -> None:
    """The default tree (no details: String keys in their entries' labels, one value field per Variant
    sharing its bytes), read from PDML: every frame, the same messages, types, values and keys."""
    pcap = CAPTURES / MANIFEST[name]["pcap"]
    assert_parity(tshark_pdml(pcap, "-2", *ALL_SHOWN), py_messages(pcap, pdml=True))


def _merged(tmp_path: Path) -> Path:
    out = tmp_path / "all.pcapng"
    subprocess.run(["mergecap", "-a", "-w", str(out), *(str(CAPTURES / MANIFEST[n]["pcap"]) for n in NAMES)],
                   check=True)
    return out


@pytest.mark.skipif(shutil.which("mergecap") is None, reason="mergecap not installed")
def test_one_pass_default_tree(tmp_path: Path) -> None:
    """Default preferences, one pass, -V: no Lua error; the same messages, where messages shown before
    their conversation's dialect was decided may carry the provisional dialect (they read alike)."""
    merged = _merged(tmp_path)
    out = tshark(merged, "-V")
    assert out.count("Godot Variant, ") > 500
    lua = tshark_json(merged, *FULL)
    assert_parity(lua, py_messages(merged), loose_provisional=True)


@pytest.mark.skipif(shutil.which("mergecap") is None, reason="mergecap not installed")
def test_display_filters(tmp_path: Path) -> None:
    merged = _merged(tmp_path)
    out = tshark(merged, "-2", "-T", "fields", "-e", "frame.number", "-e", "godot.debugger.message",
                 "-Y", 'godot.string == "hello" || godot.debugger.message == "output" || godot.int == 2147483648')
    got = {int(line.split("\t")[0]) for line in out.splitlines() if line}
    want = set()
    for r in read_pcap(str(merged)):
        if r.message == "output" or (r.kind == "variant" and r.value in ("hello", 2147483648)):
            want.add(r.frame)
    assert want and want <= got


def test_tcp_reassembly_split_and_coalesced(tmp_path: Path) -> None:
    """dissect_tcp_pdus: every PDU cut into one-byte segments, or several PDUs per segment."""
    dbg = tmp_path / "one_byte.pcap"
    resegment(str(CAPTURES / MANIFEST["godot3-debugger"]["pcap"]), str(dbg), one_byte)
    assert_parity(tshark_json(dbg, "-2", *FULL), py_messages(dbg))
    coalesced = tmp_path / "coalesced.pcap"
    resegment(str(CAPTURES / MANIFEST["godot3-tcp-stream"]["pcap"]), str(coalesced), all_in_one)
    assert_parity(tshark_json(coalesced, "-2", *FULL), py_messages(coalesced))


def test_tcp_retransmitted_and_reordered(tmp_path: Path) -> None:
    """With out-of-order reassembly on, the same messages in the same order (Wireshark shows a message
    in the frame that filled the gap, the Python reader in the frame that delivered its last byte)."""
    pcap = tmp_path / "dup.pcap"
    resegment(str(CAPTURES / MANIFEST["godot3-debugger"]["pcap"]), str(pcap), duplicated_and_reordered)
    lua = tshark_json(pcap, "-2", *FULL, "-o", "tcp.reassemble_out_of_order:TRUE")
    sender = {s.frame: s.sport for s in segments(str(pcap))}
    got: dict[int, list] = defaultdict(list)
    for f in sorted(lua):
        got[sender[f]] += lua_messages(lua[f])
    want: dict[int, list] = defaultdict(list)
    for f, ms in py_messages(pcap).items():  # the reader's order: stream order within a conversation
        want[sender[f]] += ms
    assert got == want and len(want) == 2



def _long_pdus_mid_segment(path: Path) -> None:
    """Long PDUs (several 4 KiB stages) in both directions, segments interleaved, each ending inside a
    segment that goes on with short PDUs, one ending exactly at a stage boundary: the frame that completes
    a long PDU is dissected in more than one call (the last stage reassembled, then the rest of the segment)."""
    w = PcapWriter(path)
    tcp = hostile._Tcp(w, hostile.CLIENT, hostile.SERVER)
    short = encode("hello", get_dialect("godot3"))

    def pdu(body: bytes) -> bytes:
        return len(body).to_bytes(4, "little") + body

    def packed(n: int) -> bytes:  # a PackedByteArray Variant of n bytes (n a multiple of 4)
        return (29).to_bytes(4, "little") + n.to_bytes(4, "little") + bytes(range(256)) * (n // 256) + bytes(n % 256)

    c2s = pdu(packed(9000)) + pdu(short) * 2 + pdu(packed(8192 - 12)) + pdu(short)
    s2c = pdu(packed(7000)) + pdu(short)
    for i in range(0, max(len(c2s), len(s2c)), 700):
        tcp.send(c2s[i:i + 700], True)
        tcp.send(s2c[i:i + 700], False)
    tcp.close()
    w.close()


def test_tcp_long_pdus_ending_inside_a_segment(tmp_path: Path) -> None:
    """One pass and two: the same messages in the same frames as the Python reader (a second pass once
    showed a long PDU twice, or the last stage as junk, and lost the short PDUs after it)."""
    pcap = tmp_path / "long.pcap"
    _long_pdus_mid_segment(pcap)
    py = py_messages(pcap, ports=[hostile.PORT])
    assert sum(len(v) for v in py.values()) == 7
    ports = ("-o", f"godot.tcp_ports:{hostile.PORT}")
    assert_parity(tshark_json(pcap, "-2", *FULL, *ports), py)
    assert_parity(tshark_json(pcap, *FULL, *ports), py, loose_provisional=True)


# -- the real engines' bytes -----------------------------------------------------------------------

def _engine_pcap(run: Any, path: Path) -> int:
    w = _PcapWriter(str(path))
    n = 0
    for case in cases_for(run.family):
        res = run.encoded[case.name]
        for data in (res.data, res.data_full if case.full else None):
            if res.ok and data:
                w.udp("127.0.0.1", 5000, "127.0.0.1", 4242, data)
                n += 1
    w.close()
    return n


@pytest.mark.parametrize("family", [3, 4], ids=["godot3", "godot4"])
def test_engine_vectors_at_parity(family: int, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Every value the real Godot 3.2.3 / 4.6 encoded, one datagram each, found by the heuristic."""
    run = request.getfixturevalue(f"godot{family}_run")
    pcap = tmp_path / f"engine{family}.pcap"
    n = _engine_pcap(run, pcap)
    py = py_messages(pcap)
    assert sum(len(v) for v in py.values()) == n
    assert {m[1] for ms in py.values() for m in ms} == {run.dialect}
    assert_parity(tshark_json(pcap, "-2", *FULL), py)
    # and the default tree (String keys in labels, values sharing their Variant's bytes)
    assert_parity(tshark_pdml(pcap, "-2", *ALL_SHOWN), py_messages(pcap, pdml=True))


# -- malformed data ----------------------------------------------------------------------------------

def _malformed_frames(lua: dict[int, list[list]]) -> set[int]:
    return {f for f, items in lua.items() if any(_has(m, "godot.malformed") for m in items)}


@pytest.mark.parametrize("dialect", ["godot3", "godot4"])
def test_malformed_corpus(dialect: str, tmp_path: Path) -> None:
    """The spec-derived malformed corpus: expert info (PI_MALFORMED) exactly where the Python reader
    reports an error, the same values where it does not, and never a Lua error."""
    pcap = tmp_path / "malformed.pcap"
    w = _PcapWriter(str(pcap))
    mutants = [m for m in malformed_corpus(dialect) if m.data]
    for m in mutants:
        w.udp("127.0.0.1", 5000, "127.0.0.1", 4242, m.data)
    w.close()
    lua = tshark_json(pcap, *FULL, "-o", "godot.udp_ports:4242", "-o", f"godot.dialect:{dialect}")
    py = py_messages(pcap, dialect=dialect, ports=[4242])
    assert len(lua) == len(mutants) == sum(len(v) for v in py.values())
    py_errors = {f for f, ms in py.items() if ms[0][0] == "error"}
    assert 100 < len(py_errors) < len(mutants)
    assert _malformed_frames(lua) == py_errors
    # accepted mutants read alike (typed containers the engine would convert or empty are shown as
    # they are on the wire, with a note)
    settled = {f for f, items in lua.items() if any(_has(m, "godot.engine") for m in items)}
    assert_parity({f: v for f, v in lua.items() if f not in settled},
                  {f: v for f, v in py.items() if f not in settled})


def _mutate(src: Path, dst: Path, seed: int, rate: float = 0.01) -> None:
    """The capture with random bytes of its UDP and TCP payloads changed (headers kept)."""
    rnd = random.Random(seed)
    w = _PcapWriter(str(dst))
    for seg in segments(str(src)):
        data = bytearray(seg.payload)
        for i in range(len(data)):
            if rnd.random() < rate:
                data[i] = rnd.randrange(256)
        if seg.proto == "udp":
            w.udp(seg.src, seg.sport, seg.dst, seg.dport, bytes(data))
        else:
            w.tcp(seg.src, seg.sport, seg.dst, seg.dport, seg.seq, seg.flags, bytes(data))
    w.close()


def test_mutated_and_truncated_captures(tmp_path: Path) -> None:
    """Damaged captures: no Lua error, with the tree or without it, with TCP reassembly on or off; on
    UDP ports given to both, expert info in every frame the Python reader reports an error for."""
    pcaps = []
    for i, name in enumerate(NAMES):
        src = CAPTURES / MANIFEST[name]["pcap"]
        mutated = tmp_path / f"mutated{i}.pcap"
        _mutate(src, mutated, seed=i)
        pcaps.append(mutated)
        if name in TCP_NAMES:
            cut = tmp_path / f"cut{i}.pcap"
            resegment(str(src), str(cut), cut_start(6), keep_syn=False)
            pcaps.append(cut)
        if shutil.which("editcap"):
            snap = tmp_path / f"snap{i}.pcap"
            subprocess.run(["editcap", "-F", "pcap", "-s", "70", str(src), str(snap)], check=True)
            pcaps.append(snap)
    half = tmp_path / "half.pcapng"
    data = (CAPTURES / MANIFEST["godot3-tcp-stream"]["pcap"]).read_bytes()
    half.write_bytes(data[: len(data) // 2])
    ports = ("-o", "godot.udp_ports:4242-4243")
    experts = 0
    for pcap in pcaps:
        lua = tshark_json(pcap, *ports)
        py = py_messages(pcap, ports=[4242, 4243])
        udp_errors = {f for f, ms in py.items() if any(m[0] == "error" for m in ms)}
        frames_udp = {s.frame for s in segments(str(pcap)) if s.proto == "udp"}
        assert udp_errors & frames_udp <= _malformed_frames(lua), pcap.name
        experts += len(_malformed_frames(lua))
        # without a tree (only fields asked for), without TCP reassembly, the compact tree
        tshark(pcap, *ports, "-o", "tcp.desegment_tcp_streams:FALSE", "-o", "godot.compact:TRUE", "-T", "fields",
               "-e", "godot.type", "-e", "_ws.expert.message")
    assert experts > 50
    r = subprocess.run(["tshark", "-n", "-X", f"lua_script:{LUA}", "-r", str(half), "-V"], capture_output=True,
                       text=True)
    assert "Lua Error" not in r.stdout and "Godot Variant" in r.stdout


def test_default_tree_shows_two_levels_and_the_rest_on_request() -> None:
    """The default tree (max_depth 0: automatic) opens a message's Variant and its entries; a container
    below them is one item with its summary, checked but not opened, and no expert note says so. A
    depth set by hand (or the details preference) opens every level."""
    pcap = CAPTURES / MANIFEST["godot3-udp-all-types"]["pcap"]
    nested = [r for r in read_pcap(str(pcap)) if r.kind == "variant" and isinstance(r.value, dict)
              and any(isinstance(v, dict) and any(isinstance(x, (dict, list)) for x in v.values())
                      for v in r.value.values())]
    assert nested
    r = nested[0]
    outer, inner = next((k, v) for k, v in r.value.items() if isinstance(v, dict) and v)
    deep_key = next(k for k, x in inner.items() if isinstance(x, (dict, list)))
    args = ("-2", "-V", "-O", "godot", "-Y", f"frame.number=={r.frame}")
    summary = f'"{outer}" → Dictionary{{{", ".join(inner)}}}'
    default = tshark(pcap, *args)
    assert summary in default
    assert f'"{deep_key}" →' not in default and "nesting deeper" not in default
    for opened in (tshark(pcap, *args, "-o", "godot.max_depth:32"), tshark(pcap, *args, "-o", "godot.details:TRUE")):
        assert f'"{deep_key}" →' in opened or f'String: "{deep_key}" →' in opened


def test_no_field_extractor_at_load() -> None:
    """A Field extractor (Field.new) made when the file loads makes tshark build a protocol tree for
    every packet, with or without -V (epan/column-utils.c have_field_extractors()): the packet list
    then costs several times more. The statistics read their fields from their Listener's tree."""
    assert "Field.new(" not in LUA.read_text(encoding="utf-8")


def test_deep_nesting_stays_below_wireshark_limits(tmp_path: Path) -> None:
    """A 1000-deep Array (valid for the engine) and a 2000-deep one (rejected): no Lua error, no
    'Maximum tree depth' from Wireshark, the engine's verdict, the depth preference respected."""
    pcap = tmp_path / "deep.pcap"
    w = _PcapWriter(str(pcap))
    for depth in (1000, 2000):
        w.udp("127.0.0.1", 5000, "127.0.0.1", 4242, bytes.fromhex("1c00000001000000") * depth + bytes(4))
    w.close()
    # a depth preference above the cap (200) is capped, well below gui.max_tree_depth (500)
    out = tshark(pcap, "-o", "godot.udp_ports:4242", "-o", "godot.dialect:godot4", "-o", "godot.max_depth:100000",
                 "-V")
    assert "Maximum tree depth" not in out and "Dissector bug" not in out
    assert out.count("[Expert Info (Note/Undecoded): nesting deeper than 200 levels is not shown") == 2
    # the engine's own limit (1024): the second one is malformed, as in the Python reader
    assert "Godot Variant, godot4: Malformed: offset 8200: nesting deeper than 1024 levels" in out
    assert "Godot Variant, godot4: Array[1]" in out


# -- preferences, heuristics, Decode As ----------------------------------------------------------------

def _small_udp(path: Path, port: int) -> None:
    w = _PcapWriter(str(path))
    for payload in ("04000000 05000000 68656c6c 6f000000", "02000000 07000000", "12000000 01000000 04000000"
                    " 02000000 6870000002000000 5b000000"):
        w.udp("127.0.0.1", 39999, "127.0.0.1", port, bytes.fromhex(payload.replace(" ", "")))
    w.close()


@pytest.mark.parametrize("args,expected", [
    ((), 3),  # the heuristic finds the flow
    (("-o", "godot.heuristics:FALSE"), 0),
    (("-o", "godot.heuristics:FALSE", "-d", "udp.port==40777,godot"), 3),  # Decode As
    (("-o", "godot.heuristics:FALSE", "-o", "godot.udp_ports:40000-40999"), 3),
    (("--disable-heuristic", "godot_udp"), 0),
])
def test_preferences_heuristics_decode_as(args: tuple, expected: int, tmp_path: Path) -> None:
    pcap = tmp_path / "small.pcap"
    _small_udp(pcap, 40777)
    out = tshark(pcap, *args, "-T", "fields", "-e", "godot.type")
    assert sum(1 for line in out.splitlines() if line.strip()) == expected


def test_dialect_preference_and_detection_in_the_tree(tmp_path: Path) -> None:
    pcap = CAPTURES / MANIFEST["godot3-udp-all-types"]["pcap"]
    out = tshark(pcap, "-o", "godot.dialect:godot4", "-T", "fields", "-e", "godot.dialect", "-e", "godot.evidence")
    assert {line.split("\t")[0] for line in out.splitlines()} == {"godot4"}
    assert "chosen by the user" in out
    auto = tshark(pcap, "-2", "-T", "fields", "-e", "godot.dialect", "-e", "godot.evidence")
    assert {line.split("\t")[0] for line in auto.splitlines()} == {"godot3"}
    assert "godot3: 8/8 messages decode exactly" in auto


# -- pyshark ------------------------------------------------------------------------------------------

def test_pyshark_helper() -> None:
    pytest.importorskip("pyshark")
    from godot_dissect import pyshark as gp

    cap = gp.open(CAPTURES / MANIFEST["godot3-debugger"]["pcap"], display_filter='godot.debugger.message == "output"')
    try:
        per_packet = [[layer.get_field("debugger.message") for layer in pkt.get_multiple_layers("godot")]
                      for pkt in cap]
    finally:
        cap.close()
    outputs = [r.frame for r in read_pcap(str(CAPTURES / MANIFEST["godot3-debugger"]["pcap"])) if r.message == "output"]
    # the name is on every PDU of a Godot 3 message: at least the frames of the whole messages match
    # (pyshark keeps one godot layer per packet when a frame holds several messages)
    assert len(per_packet) >= len(set(outputs)) > 5 and all(per_packet)
    assert sum(names.count("output") for names in per_packet) > len(per_packet) // 2
    cap = gp.open(CAPTURES / MANIFEST["godot3-udp-all-types"]["pcap"], dialect="godot3", details=True,
                  display_filter='godot.string == "hello"')
    try:
        pkts = list(cap)
        assert "-o" in cap.get_parameters() and "godot.dialect:godot3" in cap.get_parameters()
    finally:
        cap.close()
    assert len(pkts) == 1 and pkts[0].godot.dialect == "godot3"
