"""Issue 15 items 1, 2, 9 and the JSON depth: values no input may crash on.

A Godot 3 String holding the UTF-8 of a lone surrogate (Godot 3's lenient ``parse_utf8`` keeps
it), a Dictionary keyed by an Array nested up to the engine's 1024 levels, a Godot 4 Dictionary
nested 333 deep, a .tscn of many sections or with bytes that are not UTF-8.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from godot_dissect import jsonform, tscn
from godot_dissect import values as V
from godot_dissect.codec import decoder
from godot_dissect.codec import fast as _fast
from godot_dissect.codec.decoder import decode
from godot_dissect.deep import deep_recursion
from godot_dissect.detect import plausible
from godot_dissect.errors import DecodeError
from godot_dissect.fuzz import hostile
from godot_dissect.scapy import GodotVariant
from godot_dissect.spec import get_dialect
from godot_dissect.text.parser import TextParseError, from_text
from godot_dissect.text.writer import compiled_writer, to_text

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = ROOT / "captures"


def _cli(*args: str, pure: bool = False) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GODOT_DISSECT_PURE": "1" if pure else "0"}
    return subprocess.run([sys.executable, "-m", "godot_dissect", *args], capture_output=True, env=env, timeout=300)


def _equal(a: object, b: object) -> bool:
    with deep_recursion():  # comparing values nested 1000 deep needs the room the library gives itself
        return a == b


# --- item 1: lone surrogates ----------------------------------------------------------------------

@pytest.mark.parametrize("pure", [False, True], ids=["compiled", "pure"])
@pytest.mark.parametrize("fmt", [(), ("-V",), ("-T", "json"), ("-T", "jsonl")], ids=["text", "V", "json", "jsonl"])
def test_lone_surrogate_read_every_format(tmp_path: Path, fmt: tuple[str, ...], pure: bool) -> None:
    pcap = tmp_path / "s.pcap"
    hostile.surrogates(6, pcap)  # hello, U+D800, hello, U+D800, hello, U+D800
    r = _cli("read", "-p", str(hostile.PORT), *fmt, str(pcap), pure=pure)
    assert r.returncode == 0, r.stderr.decode()
    assert b"Traceback" not in r.stderr
    out = r.stdout.decode("utf-8")  # strict: every byte written is UTF-8
    if fmt and fmt[-1] in ("json", "jsonl"):
        recs = json.loads(out) if fmt[-1] == "json" else [json.loads(line) for line in out.splitlines()]
        assert [rec["value"] for rec in recs] == ["hello", "\ud800"] * 3  # json.loads gives the code point back
        assert [rec["text"] for rec in recs] == ['"hello"', '"\\ud800"'] * 3
    else:
        lines = [line for line in out.splitlines() if " variant String " in line]
        assert len(lines) == 6
        assert [line.endswith('String "\\ud800"') for line in lines] == [False, True] * 3


def test_compiled_writers_escape_surrogates_themselves() -> None:
    if not _fast.ENABLED:
        pytest.skip("the _speedups extension is not built")
    value = ["a\ud800", {"\udfff": "\\\"\n\x01é"}]
    line = _fast.c_json(value, jsonform.c_tables)
    assert line is not None  # written by _render.c, not left to Python
    assert line == jsonform.escape_surrogates(json.dumps(jsonform.to_json(value), ensure_ascii=False))
    assert "\\ud800" in line and "\\udfff" in line
    assert jsonform.loads(line) == value
    for d in ("godot3", "godot4"):
        text = _fast.c_text(value, get_dialect(d), compiled_writer)
        assert text is not None and "\\ud800" in text and "\\udfff" in text
        text.encode("utf-8")
    assert from_text(_fast.c_text(value, get_dialect("godot3"), compiled_writer), "godot3") == value
    head = {"frame": 1, "kind": "variant"}
    rec = _fast.c_json_line(head, to_text(value, "godot3"), value, jsonform.c_tables)
    assert rec is not None and json.loads(rec)["value"] == jsonform.to_json(value)


def test_surrogate_text_round_trips_in_godot3_notation() -> None:
    for v in ("\ud800", "x\udbff\udc00y", V.StringName("\udc00") if False else "\udc00"):
        assert from_text(to_text(v, "godot3"), "godot3") == v


# --- item 2: keys nested up to the engine's limit -------------------------------------------------

@pytest.mark.parametrize("depth", [500, 1023])
@pytest.mark.parametrize("pure", [False, True], ids=["compiled", "pure"])
def test_deep_dictionary_keys_everywhere(depth: int, pure: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if pure:
        monkeypatch.setattr(_fast, "fast_decode_prefix", None)
        monkeypatch.setattr(_fast, "fast_text", None)
        monkeypatch.setattr(_fast, "fast_json", None)
    data = hostile.deep_key_dictionary(depth)  # the same deep key twice: Python must compare them
    value = decode(data, "godot3")
    key = next(iter(value))
    assert len(value) == 1 and value[key] is None and isinstance(key, tuple)
    assert decoder.decode_prefix(data, "godot3")[1] == len(data)
    assert plausible(data)
    assert hash(V.freeze([[1], {2: [3]}] * 3)) == hash(V.freeze([[1], {2: [3]}] * 3))
    text = to_text(value, "godot3")
    assert _equal(from_text(text, "godot3"), value)
    assert _equal(jsonform.loads(jsonform.dumps(value)), value)
    json.loads(jsonform.dumps(value))
    scene = tscn.loads(f'[gd_scene format=2]\n\n[node name="n" type="Node"]\nmeta = {text}\n')
    assert _equal(scene.sections[-1].properties["meta"], value)
    pkt = GodotVariant(data, dialect="godot3")
    pkt.show(dump=True)
    assert _equal(pkt.to_value(), value)


def test_keys_past_the_engine_limit_are_clean_errors() -> None:
    data = hostile.deep_key_dictionary(1024)
    with pytest.raises(DecodeError, match="nesting deeper than 1024 levels") as e:
        decode(data, "godot3")
    assert "offset" in str(e.value)
    # a key in the text notation has the same limit, counted alike: the Dictionary and 1023 Arrays
    # with elements (the innermost empty) are fine, one more level is not
    one_key = bytes.fromhex("12000000" "01000000") + hostile.variant_array(1023) + bytes.fromhex("02000000" "01000000")
    assert _equal(from_text("{ " + "[" * 1024 + "]" * 1024 + ": 1 }", "godot3"), decode(one_key, "godot3"))
    for depth in (1025, 200_000):  # 200k: Python's own hash of such a key would overflow the C stack
        key = "[" * depth + "]" * depth
        with pytest.raises(TextParseError, match="Dictionary key nested deeper than 1024 levels") as t:
            from_text("{ " + key + ": 1 }", "godot3")
        assert (t.value.line, t.value.column) == (1, 2 + 2 * depth)  # where the key ends


# --- JSON depth -------------------------------------------------------------------------------------

def test_json_form_stays_within_its_depth(tmp_path: Path) -> None:
    value = decode(hostile.nested_dictionary(333), "godot4")  # legal Godot 4: 333 < 1024
    line = jsonform.dumps(value)
    data = json.loads(line)  # nested, it would be 999 levels: more than json.loads takes
    assert data["type"] == "Flat" and len(data["nodes"]) == 333
    assert _equal(jsonform.loads(line), value)
    shallow = decode(hostile.nested_dictionary(20), "godot4")
    assert "Flat" not in jsonform.dumps(shallow)  # shallow values keep the nested form
    pcap = tmp_path / "deep.pcap"
    hostile.deep_json(2, pcap)
    r = _cli("read", "-p", str(hostile.PORT), "-T", "jsonl", str(pcap))
    assert r.returncode == 0, r.stderr.decode()
    lines = r.stdout.decode().splitlines()
    assert [json.loads(x)["value"]["type"] for x in lines] == ["Flat", "Flat"]
    if shutil.which("jq"):
        jq = subprocess.run(["jq", "-c", ".value.nodes | length"], input=r.stdout, capture_output=True, timeout=60)
        assert jq.returncode == 0, jq.stderr
        assert jq.stdout.split() == [b"333", b"333"]


# --- item 9: .tscn ----------------------------------------------------------------------------------

def test_tscn_section_lines_and_bad_utf8(tmp_path: Path) -> None:
    path = tmp_path / "many.tscn"
    hostile.tscn_sections(3000, path)
    scene = tscn.load(path)
    text = path.read_text()
    want = [i + 1 for i, line in enumerate(text.splitlines()) if line.startswith("[")]
    assert [s.line for s in scene.sections] == want
    bad = tmp_path / "bad.tscn"
    hostile.tscn_bad_utf8(10, bad)
    with pytest.raises(TextParseError) as e:
        tscn.load(bad)
    assert e.value.line == bad.read_bytes().count(b"\n")  # the last line, where the bad byte is
    assert "not UTF-8" in str(e.value) and "0xff" in str(e.value)


# --- fuzz --seed-pcap ---------------------------------------------------------------------------------

def test_fuzz_seed_pcap_errors_are_clean(tmp_path: Path) -> None:
    import gzip

    cut = tmp_path / "cut.pcapng.gz"
    cut.write_bytes(gzip.compress((CAPTURES / "godot3-tcp-stream.pcapng").read_bytes())[:3000])
    r = _cli("fuzz", "--target", "udp://127.0.0.1:9", "--seed-pcap", str(cut), "--count", "1")
    assert r.returncode == 2
    assert b"Traceback" not in r.stderr
    assert r.stderr.decode().startswith(f"godot-dissect: --seed-pcap {cut}:")


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_decode_cli_writes_a_lone_surrogate(fmt: str) -> None:
    r = _cli("decode", "-d", "godot3", "-f", fmt, hostile.SURROGATE.hex())
    assert r.returncode == 0, r.stderr.decode()
    out = r.stdout.decode("utf-8")
    if fmt == "json":
        assert json.loads(out) == {"used": len(hostile.SURROGATE), "value": "\ud800"}
    else:
        assert out.strip() == '"\\ud800"'
    assert _cli("encode", "-d", "godot3", out.strip() if fmt == "text" else '"\\ud800"').stdout.decode().strip() \
        == hostile.SURROGATE.hex()


# --- encode: no bytes the engine refuses for their depth ---------------------------------------------

def test_encode_refuses_what_the_engine_refuses_for_depth() -> None:
    """Godot 4.6 decodes Arrays whose elements sit at most 1024 levels deep (Variant MAX_RECURSION_DEPTH)
    and refuses one level more; ``encode`` (and the CLI from text notation) refuses that value with an
    error naming the limit, and writes the deepest the engine takes."""
    from godot_dissect.codec import encode
    from godot_dissect.engines import DecodeCase, EngineUnavailable, get_engine
    from godot_dissect.errors import EncodeError

    def nested(levels: int, inner: list) -> list:
        v = inner
        for _ in range(levels - 1):
            v = [v]
        return v

    deepest, too_deep = nested(1024, [1]), nested(1025, [1])
    ok_bytes = encode(deepest, "godot4")
    bad_bytes = encode(too_deep, "godot4", max_depth=None)  # built on purpose, for the engine
    try:
        eng = get_engine("godot4")
    except EngineUnavailable as e:
        pytest.skip(f"Godot 4 engine unavailable: {e.reason}")
    res = eng.probe(decode=[DecodeCase(ok_bytes), DecodeCase(bad_bytes)])
    accepted, refused = res.decoded
    assert accepted.ok and not refused.ok, (accepted, refused)
    for dialect in ("godot4", "godot3"):
        with pytest.raises(EncodeError, match="nested deeper than 1024 levels"):
            encode(too_deep, dialect)
        with pytest.raises(EncodeError, match="nested deeper than 1024 levels"):
            encode({"k": [V.Object("Node", {"p": too_deep})]}, dialect, full_objects=True)
        encode(nested(1025, []), dialect)  # the innermost empty: no element past the limit
    text = "[" * 1025 + "1" + "]" * 1025
    r = _cli("encode", text)
    assert r.returncode == 1 and b"nested deeper than 1024 levels" in r.stderr and b"Traceback" not in r.stderr
    assert _cli("encode", "[" * 1024 + "1" + "]" * 1024).stdout.strip().decode() == ok_bytes.hex()


def _nested(levels: int) -> list:
    v: list = [1]
    for _ in range(levels - 1):
        v = [v]
    return v


@pytest.mark.parametrize("dialect", ["godot3", "godot4"])
def test_a_deep_branch_inside_a_big_flat_array_is_refused_as_alone(dialect: str) -> None:
    """The compiled encoder counts the levels it writes, so a big value is walked for the engine's depth
    limit only when it could be too deep (a big flat Array was walked element by element: 6x its encoding);
    a deep branch after 5,000 flat elements is still found, and a value at the limit still encodes."""
    from godot_dissect.codec import decode, encode, fast
    from godot_dissect.errors import EncodeError

    flat = list(range(5000))
    with pytest.raises(EncodeError, match="1024 levels"):
        encode(flat + [_nested(1025)], dialect)
    ok = flat + [_nested(1023)]  # the branch's innermost Array at level 1024 holds an element
    data = encode(ok, dialect)
    assert encode(decode(data, dialect), dialect) == data  # (== on the values would recurse 1024 deep)
    if fast.fast_encode_levels is not None:
        assert fast.fast_encode_levels(_nested(7), dialect)[1] == 7
        assert fast.fast_encode_levels(flat, dialect)[1] == 1
