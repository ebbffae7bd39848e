"""Every real capture decodes to its golden: what the receiving Godot engine printed.

The goldens (``captures/*.golden.jsonl``) come from the engines' own ``var2str``/``var2bytes``
prints; see captures/README.md. Each TCP capture is also re-segmented in several hostile ways and
must still give the same messages.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from godot_dissect.pcap.reader import read_pcap
from godot_dissect.records import Record
from godot_dissect.spec import get_dialect
from godot_dissect.text import to_text

from .resegment import all_in_one, cut_start, duplicated_and_reordered, one_byte, resegment

CAPTURES = Path(__file__).resolve().parent.parent / "captures"
MANIFEST = json.loads((CAPTURES / "manifest.json").read_text())
# multiplayer packets are not plain Variants: test_captures_multiplayer.py compares those captures
NAMES = sorted(n for n in MANIFEST if "multiplayer" not in n and "enet" not in n)  # Variant captures only


def flow_of(r: Record) -> str:
    return f"{r.transport} {r.src}:{r.sport} -> {r.dst}:{r.dport}"


def golden(name: str) -> dict[str, list[dict[str, Any]]]:
    by_flow: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in (CAPTURES / MANIFEST[name]["golden"]).read_text().splitlines():
        g = json.loads(line)
        by_flow[g["flow"]].append(g)
    for msgs in by_flow.values():
        msgs.sort(key=lambda g: g["index"])
    return by_flow


def _bytes_match(raw: bytes, g: dict[str, Any]) -> bool:
    if "hex" in g:
        return raw.hex() == g["hex"]
    return len(raw) == g["size"] and hashlib.sha256(raw).hexdigest() == g["hex_sha256"]


def _text_match(text: str, g: dict[str, Any]) -> bool:
    if "text" in g:
        return text == g["text"]
    return hashlib.sha256(text.encode()).hexdigest() == g["text_sha256"]


def _check_value(r_value: Any, raw: bytes, dialect: str, g: dict[str, Any], where: str) -> list[str]:
    problems = []
    if not _bytes_match(raw, g):
        problems.append(f"{where}: bytes differ from the wire")
    entry = get_dialect(dialect).by_key(_key(r_value))
    if entry is None or entry.id != g["type"]:
        problems.append(f"{where}: type {entry.id if entry else None}, engine says {g['type']}")
    text = to_text(r_value, dialect)
    if g.get("object_id") is None and not _text_match(text, g):
        problems.append(f"{where}: text {text[:80]!r}, engine printed {g.get('text', g.get('text_head'))!r:.80}")
    return problems


def _key(v: Any) -> str:
    from godot_dissect.values import type_key

    return type_key(v)


def compare(name: str, records: list[Record]) -> list[str]:
    gold = golden(name)
    got: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        got[flow_of(r)].append(r)
    problems: list[str] = []
    errors = [r for r in records if r.kind == "error"]
    problems += [f"frame {r.frame}: {r.error}" for r in errors]
    for flow, msgs in gold.items():
        recs = got.get(flow, [])
        if msgs[0].get("part"):  # debugger: golden per PDU, records per assembled message
            groups: dict[int, list[dict]] = defaultdict(list)
            for g in msgs:
                groups[g["message_index"]].append(g)
            if len(recs) != len(groups):
                problems.append(f"{flow}: {len(recs)} messages, golden has {len(groups)}")
            for r, (_, parts) in zip(recs, sorted(groups.items()), strict=False):
                if r.message != parts[0]["message"]:
                    problems.append(f"{flow} frame {r.frame}: message {r.message!r}, golden {parts[0]['message']!r}")
                    continue
                args = [p for p in parts if p["part"] == "arg"]
                if parts[0]["part"] == "command":
                    problems += _check_value([r.message, *r.value], r.raw, r.dialect, parts[0],
                                             f"{flow} {r.message}")
                    continue
                if r.raw.hex() != "".join(p.get("hex", "") for p in parts) and all("hex" in p for p in parts):
                    problems.append(f"{flow} {r.message}: raw bytes are not the PDUs joined")
                if len(args) != len(r.value):
                    problems.append(f"{flow} {r.message}: {len(r.value)} args, golden {len(args)}")
                for i, (v, g) in enumerate(zip(r.value, args, strict=False)):
                    problems += _check_value(v, _arg_bytes(r, i, parts), r.dialect, g, f"{flow} {r.message}[{i}]")
            continue
        if len(recs) != len(msgs):
            problems.append(f"{flow}: {len(recs)} messages, golden has {len(msgs)}")
        for r, g in zip(recs, msgs, strict=False):
            where = f"{flow} #{g['index']} frame {r.frame}"
            if g.get("kind") == "text":  # a WebSocket text message
                if r.kind != "text" or r.value != g["text"] or r.raw.hex() != g["hex"]:
                    problems.append(f"{where}: text message {r.value!r}, golden {g['text']!r}")
                continue
            problems += _check_value(r.value, r.raw, r.dialect, g, where)
    return problems


def _arg_bytes(r: Record, i: int, parts: list[dict]) -> bytes:
    """The bytes of argument i inside the assembled debugger message (one PDU each)."""
    args = [p for p in parts if p["part"] == "arg"]
    g = args[i]
    return bytes.fromhex(g["hex"]) if "hex" in g else b""


@pytest.mark.parametrize("name", NAMES)
def test_capture_matches_golden(name: str) -> None:
    records = list(read_pcap(str(CAPTURES / MANIFEST[name]["pcap"])))
    problems = compare(name, records)
    assert not problems, f"{len(problems)} differences:\n" + "\n".join(problems[:40])


TCP_NAMES = [n for n in NAMES if '"tcp ' in json.dumps(MANIFEST[n]["flows"])]
# WebSocket captures too: the HTTP upgrade must be recognised whatever the segment sizes
STREAM_NAMES = TCP_NAMES + [n for n in NAMES if '"websocket ' in json.dumps(MANIFEST[n]["flows"])]


@pytest.mark.parametrize("plan", [one_byte, all_in_one, duplicated_and_reordered], ids=lambda p: p.__name__)
@pytest.mark.parametrize("name", STREAM_NAMES)
def test_resegmented_capture_gives_the_same_messages(name: str, plan: Any, tmp_path: Path) -> None:
    out = tmp_path / "reseg.pcap"
    resegment(str(CAPTURES / MANIFEST[name]["pcap"]), str(out), plan)
    records = list(read_pcap(str(out)))
    problems = compare(name, records)
    assert not problems, f"{len(problems)} differences:\n" + "\n".join(problems[:40])


@pytest.mark.parametrize("name", TCP_NAMES)
def test_capture_cut_at_the_start_resynchronises(name: str, tmp_path: Path) -> None:
    """Start 6 bytes into every stream, without the SYN: the reader reports the skipped bytes
    and then finds every later message, byte for byte."""
    out = tmp_path / "cut.pcap"
    resegment(str(CAPTURES / MANIFEST[name]["pcap"]), str(out), cut_start(6), keep_syn=False)
    records = list(read_pcap(str(out), ports=[4244, 4245]))
    skipped = [r for r in records if r.kind == "error"]
    assert skipped and all("skipped" in r.error for r in skipped)  # type: ignore[operator]
    gold = golden(name)
    got = defaultdict(list)
    for r in records:
        if r.kind != "error":
            got[flow_of(r)].append(r)
    for flow, msgs in gold.items():
        hexes = [r.raw.hex() for r in got.get(flow, [])]
        if msgs[0].get("part"):
            continue  # debugger messages span PDUs; the value-level check above covers them
        expected = [g["hex"] for g in msgs[1:] if "hex" in g]
        assert [h for h in hexes if h in expected] == expected[-len([h for h in hexes if h in expected]):]
        assert len(hexes) >= len(msgs) - 1
