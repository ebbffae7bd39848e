"""Reproducer folders: what a finding leaves behind, and reading it back for ``replay``.

    finding-001-crash/
      payload.bin      the fuzzed Variant (minimised when it could be), unframed
      original.bin     the payload as first sent, when minimisation changed it
      messages/        the other messages of a conversation case, or every case of a sequence
      exchange.pcapng  what went over the wire, from the last good probe to the finding (its comment names
                       dialect, framing, target and case: ``read`` needs no options)
      minimised.pcapng the minimised payload killing a fresh target (with --cmd)
      target.log       the end of the target's output (with --cmd)
      finding.json     dialect, framing, target, seed and case index, how it was detected, the cases
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .cases import Case

FORMAT = "godot-dissect-fuzz-finding/1"


@dataclass
class Reproducer:
    path: Path
    info: dict[str, Any]
    cases: list[Case]

    @property
    def dialect(self) -> str:
        return self.info["dialect"]

    @property
    def framing(self) -> str:
        return self.info["framing"]


def _case_entry(folder: Path, case: Case, prefix: str, payload_name: str | None) -> dict[str, Any]:
    files = []
    msgs = folder / "messages"
    for k, m in enumerate(case.before):
        name = f"messages/{prefix}before-{k:03d}.bin"
        msgs.mkdir(exist_ok=True)
        (folder / name).write_bytes(m)
        files.append(name)
    fuzzed = len(files)
    if payload_name is None:
        payload_name = f"messages/{prefix}payload.bin"
        msgs.mkdir(exist_ok=True)
    (folder / payload_name).write_bytes(case.payload)
    files.append(payload_name)
    for k, m in enumerate(case.after):
        name = f"messages/{prefix}after-{k:03d}.bin"
        msgs.mkdir(exist_ok=True)
        (folder / name).write_bytes(m)
        files.append(name)
    return {**case.to_json(), "messages": files, "fuzzed": fuzzed,
            "payload_sha256": hashlib.sha256(case.payload).hexdigest()}


def save(folder: Path, info: dict[str, Any], cases: list[Case], original: Case | None = None) -> Path:
    """Write a reproducer: ``cases[-1]`` is the one that killed the target (its payload is payload.bin);
    earlier cases (a sequence) are sent first by ``replay``."""
    folder.mkdir(parents=True, exist_ok=True)
    entries = []
    for k, c in enumerate(cases):
        last = k == len(cases) - 1
        entries.append(_case_entry(folder, c, f"{k:04d}-", "payload.bin" if last else None))
    if original is not None and original.payload != cases[-1].payload:
        (folder / "original.bin").write_bytes(original.payload)
    main = cases[-1]
    doc = {
        "format": FORMAT,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        **info,
        "case_index": main.index,
        "strategy": main.strategy,
        "name": main.name,
        "payload": "payload.bin",
        "payload_size": len(main.payload),
        "payload_sha256": hashlib.sha256(main.payload).hexdigest(),
        "original": "original.bin" if (folder / "original.bin").exists() else None,
        "cases": entries,
    }
    (folder / "finding.json").write_text(json.dumps(doc, indent=2, default=str) + "\n", encoding="utf-8")
    return folder


def load(path: str | Path) -> Reproducer:
    """Read a reproducer folder (or its finding.json). A folder with only a payload.bin is one case."""
    p = Path(path)
    folder = p.parent if p.is_file() and p.name.endswith(".json") else p
    meta = folder / "finding.json"
    if not meta.exists():
        if p.is_file():  # a bare payload file
            return Reproducer(p.parent, {"dialect": None, "framing": None},
                              [Case(0, "replay", p.name, p.read_bytes())])
        raise FileNotFoundError(f"{folder}: no finding.json")
    info = json.loads(meta.read_text(encoding="utf-8"))
    cases = []
    for e in info.get("cases") or [{"messages": [info.get("payload", "payload.bin")], "fuzzed": 0}]:
        msgs = [(folder / m).read_bytes() for m in e["messages"]]
        k = int(e.get("fuzzed", 0))
        cases.append(Case(int(e.get("index", 0)), e.get("strategy", "replay"), e.get("name", ""), msgs[k],
                          allow_objects=bool(e.get("allow_objects", False)), recipe=e.get("recipe"),
                          before=tuple(msgs[:k]), after=tuple(msgs[k + 1:]), frame_length=e.get("frame_length"),
                          meta=dict(e.get("meta") or {})))
    return Reproducer(folder, info, cases)
