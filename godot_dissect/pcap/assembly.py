"""Assembly stage: decoded PDUs -> remote debugger messages (Godot 3 and 4).

Godot 4 and the Godot 3 editor send one Array per message; a Godot 3 game sends a name PDU, an
argument count PDU, then that many argument PDUs (``spec.transports.DEBUGGER_SHAPES``). The count
is bounded by what a game can send (``MAX_DEBUGGER3_ARGS``): a bigger one is an error record and
the next PDU starts over. Bytes kept per message are bounded too (``MAX_DEBUGGER3_MESSAGE``): the
rest of a bigger message is counted and reported in one error record. The arguments are kept as their
bytes and decoded when the message is whole (their values can take 10x their bytes: a million small
arguments held as values took several times what the held-bytes budget counted). Each function returns the
record fields (``kind``, ``message``, ``value``, ...) for the reader to turn into records.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Any

from ..spec.debugger import is_godot3_message_name
from ..spec.transports import MAX_DEBUGGER3_ARGS, MAX_DEBUGGER3_MESSAGE
from .framing import Pdu

Fields = dict[str, Any]


def godot4_message(item: Pdu, value: Any) -> Fields:
    """One Godot 4 debugger message: [name, thread, data] (4.2+) or [name, data] (4.0, 4.1)."""
    if isinstance(value, list) and len(value) == 3 and isinstance(value[0], str) \
            and isinstance(value[1], int) and isinstance(value[2], list):
        return {"kind": "debugger", "message": value[0], "thread": value[1], "value": value[2], "raw": item.data}
    if isinstance(value, list) and len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], list):
        return {"kind": "debugger", "message": value[0], "value": value[1], "raw": item.data}
    return {"kind": "error", "raw": item.data, "value": value,
            "error": f"offset {item.offset}: debugger message is not [name, thread, data]"}


class Godot3Message:
    """A Godot 3 game -> editor message being assembled (name, count, arguments)."""

    __slots__ = ("name", "count", "ends", "args", "raw", "offset", "wire", "dropped", "decode", "args_at")

    def __init__(self, name: str, first: Pdu, decode: Callable[[bytes], Any]) -> None:
        """``decode``: an argument's PDU body -> its value, as the PDU was decoded when it came."""
        self.name = name
        self.count: int | None = None
        self.ends = array("Q")  # where each kept argument's bytes end in ``raw``
        self.args = 0  # arguments so far (kept or dropped)
        self.raw = bytearray(first.data)
        self.offset = first.offset
        self.wire = first.wire
        self.dropped = 0  # argument bytes counted, not kept (beyond MAX_DEBUGGER3_MESSAGE)
        self.decode = decode
        self.args_at = 0  # where the arguments' bytes start in ``raw``

    @property
    def held_bytes(self) -> int:
        return len(self.raw) + self.ends.itemsize * len(self.ends)

    def add(self, item: Pdu, value: Any) -> Fields | None:
        """The next PDU's value: the finished message's fields, an error's, or None (more to come)."""
        self.wire += item.wire
        if self.count is None:
            self.raw += item.data
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                return self._error(f"offset {item.offset}: debugger message {self.name!r} has no argument count")
            if value > MAX_DEBUGGER3_ARGS:
                return self._error(f"offset {item.offset}: debugger message {self.name!r} claims {value} arguments, "
                                   f"more than a Godot 3 game can send ({MAX_DEBUGGER3_ARGS}); the next PDU starts "
                                   f"a new message")
            self.count = value
            self.args_at = len(self.raw)
        else:
            self.args += 1
            if self.dropped or len(self.raw) + len(item.data) > MAX_DEBUGGER3_MESSAGE:
                self.dropped += len(item.data)
            else:
                self.raw += item.data
                self.ends.append(len(self.raw))
        if self.args < self.count:
            return None
        if self.dropped:
            return self._error(f"offset {self.offset}: debugger message {self.name!r} is larger than a Godot 3 game's "
                               f"output buffer ({MAX_DEBUGGER3_MESSAGE} bytes): {self.dropped} bytes of its "
                               f"{self.count} arguments not kept")
        raw = bytes(self.raw)
        starts = [self.args_at, *self.ends[:-1]] if self.ends else []
        args = [self.decode(raw[a:b]) for a, b in zip(starts, self.ends, strict=True)]
        return {"kind": "debugger", "message": self.name, "value": args, "raw": raw,
                "wire_bytes": self.wire, "offset": self.offset}

    def cut(self, why: str | None = None) -> Fields:
        """The capture ended (or the conversation was finished, ``why``) inside this message."""
        got = self.args
        want = "its argument count" if self.count is None else f"{got} of {self.count} arguments"
        return self._error(f"offset {self.offset}: debugger message {self.name!r} never completed ({want}; "
                           f"{len(self.raw) + self.dropped} bytes): {why or 'the capture ends'}")

    def _error(self, why: str) -> Fields:
        return {"kind": "error", "raw": bytes(self.raw), "message": self.name, "wire_bytes": self.wire, "error": why}


def godot3_start(item: Pdu, value: Any, decode: Callable[[bytes], Any]) -> tuple[Fields | None, Godot3Message | None]:
    """The first PDU of a Godot 3 debugger message: the editor's [command, args...] whole, a game's
    message name (assembly starts; ``spec.debugger.is_godot3_message_name``), or a plain Variant.
    ``decode``: see ``Godot3Message``."""
    if isinstance(value, list) and value and isinstance(value[0], str):
        return {"kind": "debugger", "message": value[0], "value": value[1:], "raw": item.data}, None
    if isinstance(value, str) and is_godot3_message_name(value):
        return None, Godot3Message(value, item, decode)
    # a String that names no message is an argument PDU of a message whose start the capture missed
    return {"kind": "variant", "value": value, "raw": item.data}, None
