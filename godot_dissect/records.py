"""One record per Godot message found in a capture, and its JSON line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import jsonform
from .spec import get_dialect
from .values import type_key


@dataclass(slots=True)
class Record:
    frame: int  # frame that completed the message (as Wireshark counts, from 1)
    time: float
    src: str
    sport: int
    dst: str
    dport: int
    transport: str  # "udp" | "tcp" | "websocket"
    direction: str  # "c2s" (from the side that opened the conversation) | "s2c"
    dialect: str
    kind: str  # "variant" | "debugger" | "text" (WebSocket text) | "error"
    value: Any = None
    raw: bytes = b""
    offset: int = 0  # stream offset of the message (0 for datagrams)
    error: str | None = None
    message: str | None = None  # debugger message name
    thread: int | None = None  # debugger thread id (Godot 4.2+)
    evidence: str = ""  # why this dialect

    @property
    def type(self) -> str:
        """The engine's name for the value's type in this record's dialect."""
        if self.kind == "error":
            return ""
        if self.kind == "text":
            return "text"
        try:
            entry = get_dialect(self.dialect).by_key(type_key(self.value))
        except (TypeError, ValueError):
            return ""
        return entry.name if entry else ""

    def text(self) -> str:
        if self.kind == "error":
            return ""
        if self.kind == "text":
            return str(self.value)
        from .text import to_text

        return to_text(self.value, self.dialect)

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "frame": self.frame, "time": round(self.time, 6), "src": self.src, "sport": self.sport,
            "dst": self.dst, "dport": self.dport, "transport": self.transport, "direction": self.direction,
            "kind": self.kind, "dialect": self.dialect, "type": self.type, "offset": self.offset,
            "length": len(self.raw),
        }
        if self.message is not None:
            d["message"] = self.message
        if self.thread is not None:
            d["thread"] = self.thread
        if self.error is not None:
            d["error"] = self.error
            d["hex"] = self.raw[:256].hex()
        else:
            d["text"] = self.text()
            d["value"] = jsonform.to_json(self.value) if self.kind != "text" else self.value
        return d

    def to_jsonl(self) -> str:
        return jsonform.json_text(self.to_json())
