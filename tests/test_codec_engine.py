"""Our binary codec against the real engines: Godot 3.2.3 (native) and Godot 4.6 (web build)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from godot_dissect import DecodeError, decode_prefix, encode, jsonform
from godot_dissect import values as V

from .oracle_cases import ANY_ID, cases_for, value_for


def same(a: Any, b: Any) -> bool:
    """Identical Godot values: same types, same floats bit for bit (NaN-aware), same order."""
    return jsonform.dumps(a) == jsonform.dumps(b)


def strip_widths(v: Any) -> Any:
    """The value as the engine holds it in memory: wire-width markers dropped."""
    j = jsonform.dumps(v)
    for tag in ('"wide": true', '"bits": 64', '"bits": 32'):
        j = j.replace(", " + tag, "")
    return jsonform.loads(j)


def _object_agrees(ours: Any, engine_text: str) -> bool:
    """The engine re-encodes a decoded EncodedObjectAsID with its own new id, so compare its text."""
    if engine_text.strip() == "null":
        return ours in (V.ObjectID(0), V.Object(""))
    m = re.search(r'"object_id":\s*(-?\d+)', engine_text)
    return isinstance(ours, V.ObjectID) and m is not None and int(m.group(1)) & (2**64 - 1) == ours.id


def _only_padding_differs(ours: bytes, theirs: bytes) -> bool:
    return len(ours) == len(theirs) and all(a == 0 for a, b in zip(ours, theirs, strict=True) if a != b)


def _case_ids(family: int) -> list[str]:
    return [c.name for c in cases_for(family)]


def _check_case(run: Any, case_name: str) -> None:
    case = next(c for c in cases_for(run.family) if c.name == case_name)
    res = run.encoded[case.name]
    assert res.ok, f"engine could not evaluate {case.name}: {res.error} {res.messages}"
    wire = res.data_full if case.full else res.data
    assert wire, f"engine produced no bytes for {case.name}"
    expected = value_for(case, run.family)
    decoded, used = decode_prefix(wire, run.dialect, allow_objects=case.full)
    assert used == len(wire)
    if expected is ANY_ID:
        assert isinstance(decoded, V.ObjectID) and decoded.id != 0
    else:
        assert same(decoded, expected), f"decoded {decoded!r}, expected {expected!r}"
        ours = encode(expected, run.dialect, full_objects=case.full)
        if isinstance(expected, V.NodePath):  # the engine leaves NodePath padding uninitialised
            assert _only_padding_differs(ours, wire), f"{ours.hex()} vs {wire.hex()}"
        else:
            assert ours.hex() == wire.hex()
    assert encode(decoded, run.dialect, full_objects=case.full) == wire or isinstance(decoded, V.NodePath)


@pytest.mark.parametrize("case_name", _case_ids(3))
def test_godot3_bytes(godot3_run: Any, case_name: str) -> None:
    _check_case(godot3_run, case_name)


@pytest.mark.parametrize("case_name", _case_ids(4))
def test_godot4_bytes(godot4_run: Any, case_name: str) -> None:
    _check_case(godot4_run, case_name)


def test_engine_versions(godot3_run: Any, godot4_run: Any) -> None:
    assert godot3_run.version.startswith("3.2.3")
    assert godot4_run.version.startswith("4.6")


def test_malformed_corpus_agrees_with_engine(engine_run: Any) -> None:
    """Accept/reject, error code and value agree with the engine on every mutant."""
    assert len(engine_run.mutants) >= 200
    disagreements = []
    for m, r in zip(engine_run.mutants, engine_run.decoded, strict=True):
        try:
            ours, _ = decode_prefix(m.data, engine_run.dialect, allow_objects=m.allow_objects)
            our_err = None
        except DecodeError as e:
            ours, our_err = None, e
        if r.crashed:
            disagreements.append(f"{m.name}: engine crashed")
            continue
        if r.ok != (our_err is None):
            disagreements.append(f"{m.name} [{m.data.hex()}]: engine {'accepts' if r.ok else f'rejects ({r.error})'}"
                                 f", we {'accept' if our_err is None else f'reject ({our_err})'}")
        elif r.ok and isinstance(ours, (V.ObjectID, V.Object)):
            if not _object_agrees(ours, r.text):
                disagreements.append(f"{m.name}: engine value {r.text!r}, ours {ours!r}")
        elif r.ok:
            theirs, _ = decode_prefix(r.reencoded, engine_run.dialect, allow_objects=True)
            if not same(strip_widths(ours), theirs):
                disagreements.append(f"{m.name}: engine value {theirs!r}, ours {ours!r}")
        elif r.error is not None and our_err is not None and r.error != our_err.code:
            disagreements.append(f"{m.name} [{m.data.hex()}]: engine error {r.error}, ours {our_err}")
    agree = len(engine_run.mutants) - len(disagreements)
    print(f"{engine_run.dialect}: {agree}/{len(engine_run.mutants)} malformed inputs agree")
    assert not disagreements, f"{len(disagreements)} disagreements:\n" + "\n".join(disagreements[:60])
