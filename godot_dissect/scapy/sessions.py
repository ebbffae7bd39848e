"""``GodotTCPSession``: scapy's ``TCPSession`` without the retransmission problem.

scapy 2.8's ``TCPSession`` forgets where a stream was once a message is complete (it drops the
stream's state), so a retransmitted segment of a message already returned starts a new "message"
in the middle of the data and the stream is out of step from there (real captures have them: the
Godot 3 WebSocket multiplayer capture re-sends a segment). This session removes the bytes of each
segment that were already seen in that direction before ``TCPSession`` sees it.
"""

from __future__ import annotations

from typing import Any

from scapy.layers.inet import TCP
from scapy.packet import Packet, Raw
from scapy.sessions import TCPSession

_MOD = 1 << 32


class GodotTCPSession(TCPSession):
    """``sniff(offline=..., session=GodotTCPSession)``: whole messages, retransmissions dropped."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._seen_end: dict[Any, int] = {}  # per direction: sequence number after the bytes seen in order

    def process(self, pkt: Packet, cls: type[Packet] | None = None) -> Packet | None:
        if not self.app and isinstance(pkt, Packet) and TCP in pkt:
            self._drop_seen(pkt)
        return super().process(pkt, cls)

    def _drop_seen(self, pkt: Packet) -> None:
        tcp = pkt[TCP]
        data = bytes(tcp.payload)
        key = self._get_ident(pkt)
        seq = tcp.seq
        if tcp.flags.S:
            self._seen_end[key] = (seq + 1) % _MOD
            return
        if not data:
            return
        end = self._seen_end.get(key)
        if end is None:
            self._seen_end[key] = (seq + len(data)) % _MOD
            return
        ahead = (seq - end) % _MOD
        if ahead < _MOD // 2:  # at or after what was seen (a gap, if any, is left to TCPSession)
            if ahead == 0:
                self._seen_end[key] = (seq + len(data)) % _MOD
            return
        seen = (end - seq) % _MOD  # bytes at the start of this segment that were already seen
        if seen >= len(data):
            tcp.remove_payload()
            return
        tcp.remove_payload()
        tcp.add_payload(Raw(data[seen:]))
        tcp.seq = end
        self._seen_end[key] = (end + len(data) - seen) % _MOD
