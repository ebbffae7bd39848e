"""``PcapReader.lines`` and the compiled writers it uses (``records.variant_line_writer``: ``JsonWriter.variant_line``
and ``TextWriter.variant_summary`` in ``codec/_render.c``), which write a Variant message's ``read`` line straight
from its bytes, without a Record: the same line as the record's (``Record.to_jsonl``, ``read``'s text line), on
every message of the committed Godot 3.2.3 / 4.6 captures, and on damaged and hostile bodies (cut short, random
bytes, nested 500 deep, counts of 2^31, lone surrogates), where the writer either agrees with the pure decoder
and writers or leaves the message to the reader (None)."""

from __future__ import annotations

import argparse
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from godot_dissect.cli import read_cmds
from godot_dissect.codec import decode_prefix, encode, fast
from godot_dissect.errors import DecodeError
from godot_dissect.pcap.reader import PcapReader, read_pcap
from godot_dissect.records import Record, variant_line_writer
from godot_dissect.spec import get_dialect
from godot_dissect.spec.transports import MAX_DEPTH
from godot_dissect.values import NodePath, PackedStringArray, StringName

from .strategies import values
from .test_render import pure_only

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = sorted((ROOT / "captures").rglob("*.pcap*"))
SUMMARY = (read_cmds.SUMMARY_CHARS, (read_cmds.ENDS, read_cmds.ARROWS["c2s"], read_cmds.ARROWS["s2c"]))
HEAD = (7, 1795643545.613446, "127.0.0.1", 56396, "127.0.0.1", 4254, "tcp", "c2s")

pytestmark = pytest.mark.skipif(not fast.ENABLED, reason="the compiled writers are not built or turned off")


def _writers(dialect: str) -> tuple[Any, Any]:
    return variant_line_writer(dialect, MAX_DEPTH), variant_line_writer(dialect, MAX_DEPTH, SUMMARY)


def _record(body: bytes, dialect: str, value: Any, offset: int = 0, wire: float = 0.0) -> Record:
    """The record ``PcapReader._variant`` makes of a message body (HEAD's frame, time, ends, transport, direction)."""
    return Record(*HEAD, dialect, "variant", value, body, offset, evidence="test", wire_bytes=wire)


def _pure_value(body: bytes, dialect: str) -> tuple[bool, Any]:
    saved = fast.fast_decode_prefix
    fast.fast_decode_prefix = None
    try:
        return True, decode_prefix(body, dialect, allow_objects=True, max_depth=MAX_DEPTH)[0]
    except DecodeError:
        return False, None
    finally:
        fast.fast_decode_prefix = saved


def check_body(body: bytes, dialect: str) -> bool:
    """The compiled lines of ``body`` are None, or the lines of its record (pure decoder; the record's writers).
    True: the compiled writer wrote both."""
    ok, value = _pure_value(body, dialect)
    rec = _record(body, dialect, value) if ok else None
    if rec is not None:
        rec.type  # noqa: B018 - names the value's class, as the record of the first such message does in the reader
    json_line, summary = _writers(dialect)
    head = (*HEAD, dialect, 0, 0.0)
    got_json, got_text = json_line(body, *head), summary(body, *head)
    if got_json is None and got_text is None:
        return False
    assert rec is not None, f"the compiled writer wrote a line of a body the decoder rejects: {body[:64].hex()}"
    if got_json is not None:
        assert got_json == rec.to_jsonl()
    if got_text is not None:
        assert got_text == read_cmds._text_record_line(rec)
    return got_json is not None and got_text is not None


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: p.name)
def test_lines_of_real_messages_are_their_records_lines(capture: Path) -> None:
    written = 0
    for rec in read_pcap(str(capture)):
        if rec.kind != "variant" or rec.error is not None or rec.node is not None or rec.channel is not None:
            continue
        json_line, summary = _writers(rec.dialect)
        want_json, want_text = rec.to_jsonl(), read_cmds._text_record_line(rec)  # (Record.type names the class)
        head = (rec.frame, rec.time, rec.src, rec.sport, rec.dst, rec.dport, rec.transport, rec.direction,
                rec.dialect, rec.offset, rec.wire_bytes)
        got_json, got_text = json_line(rec.raw, *head), summary(rec.raw, *head)
        if got_json is not None:
            assert got_json == want_json
            written += 1
        if got_text is not None:
            assert got_text == want_text
    if written == 0:
        pytest.skip("no plain Variant message the compiled writer writes in this capture")


@pytest.mark.parametrize("fmt", ["jsonl", "text"])
@pytest.mark.parametrize("capture", [p for p in CAPTURES if "godot3-tcp" in p.name or "udp-all" in p.name],
                         ids=lambda p: p.name)
def test_reader_lines_are_the_records_lines(capture: Path, fmt: str) -> None:
    """``PcapReader.lines`` as ``read`` calls it gives each record's line, in the records' order."""
    args = argparse.Namespace(format=fmt, verbose=False, evidence=False)
    writers = read_cmds._line_writers(args)
    assert writers is not None
    lines = list(PcapReader(str(capture)).lines(*writers))
    want = [rec.to_jsonl() if fmt == "jsonl" else read_cmds._text_record_line(rec) for rec in read_pcap(str(capture))]
    assert lines == want and lines


def _type_id(dialect: str, name: str) -> int:
    return next(e.id for e in get_dialect(dialect).entries if e.name == name)


@pytest.mark.parametrize("dialect", ["godot3", "godot4"])
def test_hostile_bodies(dialect: str) -> None:
    arr, dct, string = (_type_id(dialect, n) for n in ("Array", "Dictionary", "String"))

    def nested(depth: int) -> bytes:  # an Array holding an Array ... depth deep, the last one empty
        return struct.pack("<II", arr, 1) * depth + struct.pack("<II", arr, 0)

    bodies = [
        nested(5), nested(MAX_DEPTH - 1), nested(MAX_DEPTH), nested(MAX_DEPTH + 1), nested(500),
        struct.pack("<II", arr, 2**31), struct.pack("<II", arr, 2**31 - 1), struct.pack("<II", dct, 2**31),
        struct.pack("<II", string, 2**31) + b"abcd", struct.pack("<II", arr, 0xFFFFFFFF),
        struct.pack("<II", string, 3) + b"\xed\xa0\x80\x00",  # a lone surrogate (surrogatepass's bytes)
        struct.pack("<II", string, 3) + b"\xff\xfe\xfd\x00", b"", b"\x02", b"\x02\x00\x00",
    ]
    value = {"s": "a\ud800b", "deep": [[[1.5]]], "n": 2**40}
    body = encode(value, dialect)
    bodies += [body[:i] for i in range(len(body))]
    written = [check_body(b, dialect) for b in bodies]
    assert written[0]  # (a body the decoder rejects is never written: check_body)


@settings(max_examples=300, deadline=None)
@given(values(), st.sampled_from(["godot3", "godot4"]), st.data())
def test_random_values_and_damaged_bodies(v: Any, dialect: str, data: st.DataObject) -> None:
    try:
        body = encode(v, dialect)
    except Exception:  # noqa: BLE001 - a value this dialect cannot carry: random bytes instead
        body = data.draw(st.binary(max_size=64))
    check_body(body, dialect)
    if body:
        cut = data.draw(st.integers(0, len(body) - 1))
        flip = data.draw(st.integers(0, len(body) - 1))
        check_body(body[:cut], dialect)
        check_body(body[:flip] + bytes([body[flip] ^ 0xFF]) + body[flip + 1:], dialect)


_TIMES = st.one_of(st.floats(-1e12, 1e12, allow_nan=False), st.integers(0, 2 * 10**15).map(lambda n: n / 1e6),
                   st.integers(0, 2 * 10**15).map(lambda n: (n + 0.5) / 1e6),
                   st.integers(0, 2**53).map(lambda n: n / 1e6), st.integers(0, 2**40).map(float), st.floats(0, 1e-5))


@settings(max_examples=2000, deadline=None)
@given(_TIMES)
def test_text_line_time_is_pythons(t: float) -> None:
    """The text line's time is ``f"{time:.6f}"`` (halfway cases, big, tiny and negative times)."""
    dialect = "godot3"
    body = encode(5, dialect)
    check_body(body, dialect)  # names int
    line = _writers(dialect)[1](body, HEAD[0], t, *HEAD[2:], dialect, 0, 0.0)
    assert line is not None and line.split()[1] == f"{t:.6f}"


# strings the JSON-escaped text (the "text" field written already escaped, _render.c json_twin) must get right:
# quotes, backslashes, controls, DEL, non-ASCII (then written the other way), line separators
_AWKWARD = ['say "hi"', "back\\slash\\", "nul\x00ctl\x01\x1f\x7f", "tab\tnew\nline\rff\x0cbs\x08", "é ü",
            "日本", "a\ud800b", "\u2028\u2029", "'single' /", "\\\"", ""]


def _pure_line(body: bytes, dialect: str) -> str | None:
    """The pure writers' line of the body's record; None: the decoder rejects it (its record is an error)."""
    ok, value = _pure_value(body, dialect)
    if not ok:
        return None
    rec = _record(body, dialect, value)
    rec.type  # noqa: B018 - names the value's class, as the reader's first such record does
    with pure_only():
        return rec.to_jsonl()


@pytest.mark.parametrize("dialect", ["godot3", "godot4"])
def test_awkward_strings_in_the_text_field(dialect: str) -> None:
    """The compiled line of a message holding awkward strings (as String, Dictionary key, StringName, NodePath
    and in a packed string array) is the pure writers' line."""
    json_line, _ = _writers(dialect)
    head = (*HEAD, dialect, 0, 0.0)
    written = 0
    for s in _AWKWARD:
        for v in (s, {s: [s, 1.5]}, [StringName(s)], PackedStringArray([s, s]), {"k": NodePath(s)}):
            try:
                body = encode(v, dialect)
            except Exception:  # noqa: BLE001 - a type this dialect cannot carry
                continue
            pure = _pure_line(body, dialect)
            got = json_line(body, *head)
            if got is not None:
                written += 1
                assert got == pure, (s, v)
    assert written >= len(_AWKWARD) * 2  # (some are left to Python: a lone surrogate ...)


@settings(max_examples=300, deadline=None)
@given(values(), st.sampled_from(["godot3", "godot4"]))
def test_random_values_lines_are_the_pure_lines(v: Any, dialect: str) -> None:
    try:
        body = encode(v, dialect)
    except Exception:  # noqa: BLE001 - a value this dialect cannot carry
        return
    pure = _pure_line(body, dialect)
    got = _writers(dialect)[0](body, *HEAD, dialect, 0, 0.0)
    if got is not None:
        assert got == pure
