"""How a fuzz case goes on the wire, per framing (``spec.transports``: the length prefix and the
debugger message shapes; ``spec.debugger``: the message names).

- ``udp``: one datagram per Variant (``PacketPeerUDP.put_var``);
- ``stream``: u32 LE length + Variant (``StreamPeer.put_var``, ``PacketPeerStream``);
- ``debugger3``: Godot 3 game -> editor messages: a name String PDU, an int count PDU, then the
  arguments, each PDU u32-length-prefixed;
- ``debugger4``: Godot 4 ``[u32 size][Array [name, thread_id, data]]``.

In the debugger framings a fuzzed Variant rides as the one argument of a message (``wrap``) or, as a
raw PDU, replaces the whole message. The wrapping bytes come from the encoder (no type id here).
"""

from __future__ import annotations

from ..codec import encode
from ..spec.debugger import GODOT3_TO_EDITOR, GODOT4_TO_EDITOR
from ..spec.dialects import Dialect, get_dialect
from ..spec.transports import LENGTH_PREFIX, length_prefixed
from .cases import Case

FRAMINGS = ("udp", "stream", "debugger3", "debugger4")
#: framings whose target is a TCP listener
STREAM_FRAMINGS = ("stream", "debugger3", "debugger4")
#: the message a wrapped case rides in cycles through what a game sends its editor (``spec.debugger``)
DEBUGGER_NAMES = GODOT3_TO_EDITOR
DEBUGGER4_NAMES = GODOT4_TO_EDITOR

_U32 = LENGTH_PREFIX


class Framer:
    """Turns cases into what is sent: a list of datagrams (udp) or one byte string per connection."""

    def __init__(self, framing: str, dialect: Dialect | str) -> None:
        if framing not in FRAMINGS:
            raise ValueError(f"unknown framing {framing!r}; choose one of {', '.join(FRAMINGS)}")
        self.framing = framing
        self.d = get_dialect(dialect)
        self.datagrams = framing == "udp"
        self._one = encode(1, self.d)
        self._array_head = encode([], self.d)[:4]

    def message(self, data: bytes, length: int | None = None, wrap: bool = True, index: int = 0) -> bytes:
        f = self.framing
        if f == "udp":
            return data
        if f == "stream" or not wrap:
            return length_prefixed(data, length)
        if f == "debugger3":
            name = DEBUGGER_NAMES[index % len(DEBUGGER_NAMES)]
            return (length_prefixed(encode(name, self.d)) + length_prefixed(self._one)
                    + length_prefixed(data, length))
        name = DEBUGGER4_NAMES[index % len(DEBUGGER4_NAMES)]
        # [name, 1, [data]]: Array header + count 3, name, thread id, Array header + count 1, data
        body = (self._array_head + _U32.pack(3) + encode(name, self.d) + self._one + self._array_head
                + _U32.pack(1) + data)
        return length_prefixed(body, None if length is None else length + len(body) - len(data))

    def frames(self, case: Case) -> list[bytes]:
        """One item per datagram (udp), else the messages of the case, each ready to send."""
        wrap = bool(case.meta.get("wrap", True))
        out = [self.message(m, wrap=wrap, index=case.index) for m in case.before]
        out.append(self.message(case.payload, case.frame_length, wrap, case.index))
        out += [self.message(m, wrap=wrap, index=case.index) for m in case.after]
        return out

    def honest(self, case: Case) -> bool:
        """True when the stream stays in sync after the case (the length prefixes tell the truth)."""
        return case.frame_length is None or case.frame_length == len(case.payload)

    def probe(self, value: object) -> bytes:
        return self.message(encode(value, self.d), wrap=True, index=0)
