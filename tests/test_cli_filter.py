"""``read -Y``, ``-c``, ``-T fields`` and the --kind/--type/--message checks, on the committed captures.

Each expression is run through the real command line (``godot_dissect.cli.main``) and compared with
the records of ``read_pcap`` filtered by a Python predicate written independently of the filter
module; a table of 30+ expressions, the wrong ones included (exit 2, the column, the valid fields).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from godot_dissect.cli import main
from godot_dissect.pcap.reader import read_pcap
from godot_dissect.records import Record

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ROOT / "captures"
ENET3 = "godot3-enet-multiplayer"
DEBUG3 = "godot3-debugger"
UDP3 = "godot3-udp-all-types"
TCP3 = "godot3-tcp-stream"
WS4 = "godot4-websocket-multiplayer"
ENET4 = "godot4-enet-multiplayer-assembled"


@cache
def records(name: str) -> tuple[Record, ...]:
    return tuple(read_pcap(str(CAPTURES / f"{name}.pcapng")))


def key(d: dict[str, Any]) -> tuple:
    return d["frame"], d["offset"], d["kind"], d["sport"], d["dport"], d.get("command"), d.get("message")


def rec_key(r: Record) -> tuple:
    return r.frame, r.offset, r.kind, r.sport, r.dport, r.command, r.message


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["read", *args])
    out, err = capsys.readouterr()
    return code, out, err


# (capture, expression, the same selection in Python)
CASES: list[tuple[str, str, Callable[[Record], bool]]] = [
    (ENET3, "kind == rpc", lambda r: r.kind == "rpc"),
    (ENET3, 'kind == "rpc"', lambda r: r.kind == "rpc"),
    (ENET3, "kind eq rset", lambda r: r.kind == "rset"),
    (ENET3, "kind != rpc", lambda r: r.kind != "rpc"),
    (ENET3, "!(kind == rpc)", lambda r: r.kind != "rpc"),
    (ENET3, "not kind == enet", lambda r: r.kind != "enet"),
    (ENET3, "kind in {rpc rset}", lambda r: r.kind in ("rpc", "rset")),
    (ENET3, "kind in {rpc, confirm_path}", lambda r: r.kind in ("rpc", "confirm_path")),
    (ENET3, 'method contains "spawn"', lambda r: r.method is not None and "spawn" in r.method),
    (ENET3, 'node matches "^Main/World"', lambda r: r.node is not None and re.search("^Main/World", r.node)),
    (ENET3, "method", lambda r: r.method is not None),
    (ENET3, "!method", lambda r: r.method is None),
    (ENET3, "method != request_spawn", lambda r: r.method is not None and r.method != "request_spawn"),
    (ENET3, "kind == rpc && channel == 1", lambda r: r.kind == "rpc" and r.channel == 1),
    (ENET3, "kind == rpc and channel >= 1 and sport > 4270",
     lambda r: r.kind == "rpc" and r.channel is not None and r.channel >= 1 and r.sport > 4270),
    (ENET3, "(kind == rpc || kind == rset) && dport == 4270",
     lambda r: r.kind in ("rpc", "rset") and r.dport == 4270),
    (ENET3, "kind == rpc || kind == rset && dport == 4270",  # && binds tighter, as in Wireshark
     lambda r: r.kind == "rpc" or (r.kind == "rset" and r.dport == 4270)),
    (ENET3, "port == 4272", lambda r: 4272 in (r.sport, r.dport)),
    (ENET3, "sport in {4271 4272}", lambda r: r.sport in (4271, 4272)),
    (ENET3, "dport in {4000..4270}", lambda r: 4000 <= r.dport <= 4270),
    (ENET3, "frame < 20", lambda r: r.frame < 20),
    (ENET3, "frame <= 20 or frame ge 80", lambda r: r.frame <= 20 or r.frame >= 80),
    (ENET3, "fields.peer_id == 4095", lambda r: (r.fields or {}).get("peer_id") == 4095),
    (ENET3, "peer", lambda r: r.peer is not None),
    (ENET3, "direction == c2s and transport == udp", lambda r: r.direction == "c2s" and r.transport == "udp"),
    (ENET3, "godot.kind == rset", lambda r: r.kind == "rset"),
    (ENET3, "text contains Vector3", lambda r: r.error is None and "Vector3" in r.text()),
    (DEBUG3, "message == output", lambda r: r.message == "output"),
    (DEBUG3, 'message matches "^profile_"', lambda r: r.message is not None and r.message.startswith("profile_")),
    (DEBUG3, "message in {output performance} && direction == c2s",
     lambda r: r.message in ("output", "performance") and r.direction == "c2s"),
    (DEBUG3, "length > 100", lambda r: len(r.raw) > 100),
    (UDP3, "type == Dictionary", lambda r: r.type == "Dictionary"),
    (UDP3, "type in {int float} and length <= 12", lambda r: r.type in ("int", "float") and len(r.raw) <= 12),
    (UDP3, "godot.type == 18", lambda r: r.type == "Dictionary"),  # a number: the id, as in Wireshark
    (UDP3, "type_id in {2 3}", lambda r: r.type in ("int", "float")),
    (UDP3, "dialect == godot3 && !(type == Nil)", lambda r: r.dialect == "godot3" and r.type != "Nil"),
    (UDP3, "src == 127.0.0.1 and sport == 4242", lambda r: r.src == "127.0.0.1" and r.sport == 4242),
    (UDP3, 'text matches "Vector[23]\\\\("', lambda r: re.search(r"Vector[23]\(", r.text()) is not None),
    (TCP3, "offset > 1000 && type == String", lambda r: r.offset > 1000 and r.type == "String"),
    (TCP3, "time >= 1795340726.2", lambda r: r.time >= 1795340726.2),
    (WS4, "kind == rpc and transport == websocket", lambda r: r.kind == "rpc" and r.transport == "websocket"),
    (ENET4, "kind in {spawn despawn sync}", lambda r: r.kind in ("spawn", "despawn", "sync")),
    (ENET4, "method_id == 0", lambda r: r.method_id == 0),
    (ENET4, "fields.sender", lambda r: r.fields is not None and r.fields.get("sender") is not None),
]


@pytest.mark.parametrize(("capture", "expr", "pred"), CASES, ids=[f"{c}: {e}" for c, e, _ in CASES])
def test_filter_matches_python(capsys: pytest.CaptureFixture[str], capture: str, expr: str,
                               pred: Callable[[Record], bool]) -> None:
    want = [rec_key(r) for r in records(capture) if pred(r)]
    code, out, err = cli(capsys, str(CAPTURES / f"{capture}.pcapng"), "-Y", expr, "--format", "jsonl")
    assert code == 0, err
    got = [key(json.loads(line)) for line in out.splitlines()]
    assert got == want
    assert 0 < len(want) < len(records(capture)), "a case that selects nothing or everything proves little"


def test_the_table_is_large_enough() -> None:
    assert len(CASES) + len(ERRORS) >= 30


# (expression, column, words the message must have)
ERRORS: list[tuple[str, int, str]] = [
    ("kund == rpc", 1, "unknown field 'kund'"),
    ("kind == rpc && metod contains x", 16, "unknown field 'metod'"),
    ("kind ==", 8, "ends too early"),
    ("kind == rpc)", 12, "unexpected ')'"),
    ("(kind == rpc", 13, "ends too early"),
    ("sport == http", 10, "sport is a number"),
    ('node matches "(("', 14, "bad regular expression"),
    ("kind === rpc", 8, "unexpected"),
    ("dport in {1..x}", 11, "bad range"),
    ("relayed == maybe", 12, "true or false"),
    ("not " * 150 + "kind == rpc", 401, "nested deeper than 100 levels"),  # spec.cli.MAX_FILTER_DEPTH
    ("kind == " + "x" * 100_000, 100_001, "longer than 100000 characters"),  # spec.cli.MAX_FILTER_LENGTH
]


@pytest.mark.parametrize(("expr", "column", "words"), ERRORS, ids=[e[:40] for e, _, _ in ERRORS])
def test_filter_errors_exit_2_with_the_column(capsys: pytest.CaptureFixture[str], expr: str, column: int,
                                              words: str) -> None:
    code, out, err = cli(capsys, str(CAPTURES / f"{ENET3}.pcapng"), "-Y", expr)
    assert code == 2 and out == ""
    assert f"column {column}:" in err and words in err, err
    if "unknown field" in words:
        assert "valid fields: frame, time, src" in err and "method" in err and "fields.NAME" in err


def test_count_stops_after_n_printed_records(capsys: pytest.CaptureFixture[str]) -> None:
    want = [rec_key(r) for r in records(ENET3) if r.kind == "rpc"][:5]
    code, out, _ = cli(capsys, str(CAPTURES / f"{ENET3}.pcapng"), "-Y", "kind == rpc", "-c", "5", "--format", "jsonl")
    assert code == 0 and [key(json.loads(x)) for x in out.splitlines()] == want
    code, out, _ = cli(capsys, str(CAPTURES / f"{ENET3}.pcapng"), "-c", "3")
    assert code == 0 and len(out.splitlines()) == 3
    code, out, _ = cli(capsys, str(CAPTURES / f"{ENET3}.pcapng"), "-c", "2", "--format", "json")
    assert [key(d) for d in json.loads(out)] == [rec_key(r) for r in records(ENET3)[:2]]


def test_fields_like_tshark(capsys: pytest.CaptureFixture[str]) -> None:
    recs = [r for r in records(ENET3) if r.kind in ("rpc", "enet")]
    code, out, err = cli(capsys, str(CAPTURES / f"{ENET3}.pcapng"), "-Y", "kind in {rpc enet}", "-T", "fields",
                         "-e", "frame", "-e", "kind", "-e", "node", "-e", "method", "-e", "port",
                         "-e", "fields.peer_id")
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == len(recs)
    for line, r in zip(lines, recs, strict=True):
        peer_id = (r.fields or {}).get("peer_id")
        assert line.split("\t") == [str(r.frame), r.kind, r.node or "", r.method or "", f"{r.sport},{r.dport}",
                                    "" if peer_id is None else str(peer_id)]


def test_fields_options(capsys: pytest.CaptureFixture[str]) -> None:
    recs = [r for r in records(UDP3) if r.type == "Dictionary"]
    code, out, err = cli(capsys, str(CAPTURES / f"{UDP3}.pcapng"), "--type", "Dictionary", "-T", "fields",
                         "-e", "frame", "-e", "type", "-e", "text", "-e", "error",
                         "-E", "separator=;", "-E", "header=y", "-E", "quote=d")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "frame;type;text;error"
    assert len(lines) == len(recs) + 1
    for line, r in zip(lines[1:], recs, strict=True):
        assert line == f'"{r.frame}";"Dictionary";"{r.text().replace(chr(10), chr(92) + "n")}";""'


@pytest.mark.parametrize(("args", "words"), [
    (["-T", "fields"], "needs at least one -e"),
    (["-T", "fields", "-e", "nope"], "unknown field 'nope'"),
    (["-T", "fields", "-e", "kind", "-E", "colour=y"], "-E colour=y"),
    (["-e", "kind"], "-e FIELD goes with -T fields"),
    (["--kind", "rcp"], "--kind 'rcp' is not one of"),
    (["--kind", "RPC"], "did you mean rpc?"),
    (["--type", "Int"], "did you mean int?"),
    (["--type", "Vector9"], "--type 'Vector9'"),
    (["--message", "Output"], "did you mean output?"),
    (["-c", "-1"], "-c must be 0 or more"),
    (["-a", "duration:1"], "go with -i"),
    (["--dialect", "godot5"], "--dialect: unknown dialect 'godot5'"),
])
def test_wrong_options_exit_2_with_the_valid_values(capsys: pytest.CaptureFixture[str], args: list[str],
                                                    words: str) -> None:
    code, out, err = cli(capsys, str(CAPTURES / f"{ENET3}.pcapng"), *args)
    assert code == 2 and out == "" and words in err, err
    if "is not one of" in err:
        assert ("rpc, rset" in err) if "--kind" in err else True
        assert ("Dictionary" in err) if "--type" in err else True


def test_open_message_names_and_right_values_are_accepted(capsys: pytest.CaptureFixture[str]) -> None:
    want = [rec_key(r) for r in records(DEBUG3) if r.message in ("output", "message:scene_tree")]
    code, out, err = cli(capsys, str(CAPTURES / f"{DEBUG3}.pcapng"), "--message", "output", "--message",
                         "message:scene_tree", "--format", "jsonl")
    assert code == 0, err
    assert [key(json.loads(x)) for x in out.splitlines()] == want and want


def test_readme_fields_example_is_what_read_prints(capsys: pytest.CaptureFixture[str]) -> None:
    """The README's -T fields example: its command, run here, prints exactly the lines shown."""
    import shlex

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    marker = "$ godot-dissect read captures/godot3-enet-multiplayer.pcapng -Y 'kind in {rpc rset}' -T fields"
    block = readme.split(marker, 1)[1].split("```", 1)[0]
    command, _, shown = block.partition("\n")
    while command.rstrip().endswith("\\"):
        more, _, shown = shown.partition("\n")
        command = command.rstrip()[:-1] + " " + more.strip()
    args = shlex.split("-Y 'kind in {rpc rset}' -T fields" + command)
    code, out, err = cli(capsys, str(CAPTURES / "godot3-enet-multiplayer.pcapng"), *args)
    assert code == 0, err
    assert out == shown.strip("\n") + "\n"


# -- property tests: any text is a predicate or a FilterError; generated expressions mean what they say ----------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from godot_dissect.cli.filter import FilterError, compile_filter  # noqa: E402


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(list('kindtypeoraz =!<>&|(){}",.~019-\\') + ["and ", "not ", "in ", "contains ",
                                                                         "matches ", "kind", "sport", "node"]),
                max_size=30).map("".join))
def test_any_text_compiles_or_is_a_filter_error(text: str) -> None:
    try:
        pred = compile_filter(text)
    except FilterError as e:
        assert e.column >= 1
        return
    for r in records(ENET3)[:40]:
        assert pred(r) in (True, False)


# a small independent model: (field, python getter) and the literals each field is compared with
_MODEL: dict[str, tuple[Callable[[Record], Any], list[Any]]] = {
    "kind": (lambda r: r.kind, ["rpc", "rset", "enet", "confirm_path"]),
    "channel": (lambda r: r.channel, [0, 1, 2, 255]),
    "sport": (lambda r: r.sport, [4270, 4271, 4272]),
    "node": (lambda r: r.node, ["Main", "Main/World/Players/Host"]),
    "frame": (lambda r: r.frame, [10, 50, 100]),
}
_CMP = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b, ">=": lambda a, b: a >= b}


@st.composite
def expressions(draw: st.DrawFn, depth: int = 0) -> tuple[str, Callable[[Record], bool]]:
    choice = draw(st.integers(0, 4 if depth < 4 else 1))
    if choice <= 1:
        field = draw(st.sampled_from(sorted(_MODEL)))
        get, values = _MODEL[field]
        lit = draw(st.sampled_from(values))
        ops = ["==", "!="] if isinstance(lit, str) else list(_CMP)
        op = draw(st.sampled_from(ops))
        text = f'{field} {op} "{lit}"' if isinstance(lit, str) and draw(st.booleans()) else f"{field} {op} {lit}"
        fn = _CMP[op]
        return text, lambda r: get(r) is not None and fn(get(r), lit)
    if choice == 2:
        inner, f = draw(expressions(depth + 1))
        word = draw(st.sampled_from(["!", "not "]))
        return f"{word}({inner})", lambda r: not f(r)
    a, fa = draw(expressions(depth + 1))
    b, fb = draw(expressions(depth + 1))
    if choice == 3:
        word = draw(st.sampled_from(["&&", "and"]))
        return f"({a}) {word} ({b})", lambda r: fa(r) and fb(r)
    word = draw(st.sampled_from(["||", "or"]))
    return f"({a}) {word} ({b})", lambda r: fa(r) or fb(r)


@settings(max_examples=200, deadline=None)
@given(expressions())
def test_generated_expressions_select_what_they_say(expr: tuple[str, Callable[[Record], bool]]) -> None:
    text, reference = expr
    pred = compile_filter(text)
    for r in records(ENET3):
        assert pred(r) == reference(r), (text, r.frame, r.kind)


def test_type_ids_are_the_engines(capsys: pytest.CaptureFixture[str]) -> None:
    """`godot.type == N` selects as many messages as the engine printed with typeof() == N."""
    golden = [json.loads(x) for x in (CAPTURES / f"{UDP3}.golden.jsonl").read_text().splitlines()]
    for type_id in sorted({g["type"] for g in golden}):
        code, out, err = cli(capsys, str(CAPTURES / f"{UDP3}.pcapng"), "-Y", f"godot.type == {type_id}",
                             "-T", "fields", "-e", "type")
        assert code == 0, err
        names = out.splitlines()
        assert len(names) == sum(g["type"] == type_id for g in golden), type_id
        assert set(names) <= {g["type_name"] for g in golden if g["type"] == type_id}


def test_a_backtracking_regex_on_hostile_text_is_bounded(tmp_path: Path) -> None:
    """`(a|a)+$` against 40 "a"s and a "!" backtracks 2^40 times; the search stops after
    spec.cli.MAX_MATCH_SECONDS with a usage error naming the regex's column, not a hang."""
    import struct
    import subprocess
    import sys

    from godot_dissect.fuzz.hostile import PORT, _udp
    from godot_dissect.spec.cli import MAX_MATCH_SECONDS

    text = b"a" * 40 + b"!"
    payload = struct.pack("<II", 4, len(text)) + text + b"\0" * (-len(text) % 4)  # a Variant String
    path = tmp_path / "redos.pcap"
    _udp(path, [payload])
    expr = 'text matches "(a|a)+$"'
    r = subprocess.run([sys.executable, "-m", "godot_dissect", "read", "-p", str(PORT), "-Y", expr, str(path)],
                       capture_output=True, text=True, timeout=20 * MAX_MATCH_SECONDS, cwd=ROOT)
    assert r.returncode == 2 and r.stdout == ""
    column = expr.index('"') + 1  # the regex literal's first character
    assert f"-Y: column {column}:" in r.stderr and f"more than {MAX_MATCH_SECONDS} s" in r.stderr
