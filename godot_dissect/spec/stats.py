"""Limits and thresholds of ``godot_dissect.stats`` (the offline network profiler).

Every table keeps one accumulator per distinct row, never per message; these bound what a hostile
or huge capture can make it hold. What a limit cuts off is counted, and said in the ``expert`` table.
"""

from __future__ import annotations

#: rows per table; later distinct rows are folded into one row whose key columns say "(other)"
MAX_ROWS = 100_000
#: the Lua statistics: TCP segments remembered (over the capture, every flow) whose last bytes may begin
#: a message that completes in a later frame (a WebSocket message over several segments), for its
#: wire_bytes; beyond, the oldest are forgotten and such a message loses their share
LUA_OPEN_SEGMENTS = 4096
#: round-trip samples kept per ENet row for the median (beyond: a seeded reservoir sample)
MAX_RTT_SAMPLES = 10_000
#: ENet datagram sent-times remembered per direction for matching ACK echoes (oldest forgotten)
ENET_SENT_TIMES = 4096
#: reliable sequence numbers remembered per direction and channel to spot retransmissions (oldest
#: forgotten); ENet's own window is 32 x 4096 sequence numbers, retransmissions come within a few
ENET_RELIABLE_WINDOW = 4096
#: datagrams held per UDP conversation until the reader says whether it is ENet
ENET_HELD_DATAGRAMS = 64
#: time windows kept per plotted series; beyond, windows are merged pairwise (the width doubles)
MAX_SERIES_WINDOWS = 2048
#: values looked at per message when searching for Objects (deeper or longer: "not fully searched")
MAX_VALUES_SEARCHED = 10_000

#: Dictionary key orders and conversation directions the variants table remembers (labels are
#: recomputed beyond)
KEYSET_CACHE = 4096

#: Ethernet MTU; IPv4 (20) + UDP (8) headers leave this many payload bytes before IP fragmentation
ETHERNET_MTU = 1500
UDP_IPV4_OVERHEAD = 28
UDP_PAYLOAD_MTU = ETHERNET_MTU - UDP_IPV4_OVERHEAD
