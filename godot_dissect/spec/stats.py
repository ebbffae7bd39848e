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
#: ENet datagram sent-times remembered for matching ACK echoes, over every direction together (oldest
#: forgotten: an ACK that comes back later gives no RTT sample)
ENET_SENT_TIMES = 65536
#: the header's sent time is 16 bits of milliseconds: it comes back every 65.536 s, so a sent time
#: remembered longer than half that is a previous lap's and is replaced
ENET_SENT_TIME_LAP = 65.536
#: reliable (direction, channel, sequence number)s remembered to spot retransmissions, over every
#: direction together (oldest forgotten); below the 65536 sequence numbers of a channel, so a number
#: that comes back after wrapping is never taken for a retransmission; a retransmission comes within
#: a few round trips
ENET_RELIABLE_WINDOW = 32768
#: datagrams held per UDP conversation until the reader says whether it is ENet
ENET_HELD_DATAGRAMS = 64
#: UDP conversations the enet table remembers (verdict and held datagrams); beyond, the least
#: recently active is forgotten (an undecided one loses its held datagrams: counted in ``expert``)
ENET_CONVERSATIONS = 4096
#: payload bytes held over every undecided UDP conversation together; beyond, the oldest undecided
#: conversation's datagrams are dropped (non-Godot traffic never gets a verdict)
ENET_HELD_BYTES = 8 << 20
#: RTT samples over every ENet row together (each row keeps up to MAX_RTT_SAMPLES while these
#: last, and at least ENET_RTT_FLOOR): a flood of rows cannot make the samples grow with the capture
ENET_RTT_TOTAL = 1_000_000
ENET_RTT_FLOOR = 64
#: the bandwidth window (``--interval``) in seconds: finer than a pcap's microsecond or coarser than a
#: century says nothing (and a window index of (time span / interval) must stay a finite number)
MIN_INTERVAL = 1e-6
MAX_INTERVAL = 3.2e9
#: time windows kept per plotted series; beyond, windows are merged pairwise (the width doubles)
MAX_SERIES_WINDOWS = 2048
#: values looked at per message when searching for Objects (deeper or longer: "not fully searched")
MAX_VALUES_SEARCHED = 10_000

#: rows of one table the human format (``--format table``, rich) draws, largest first: rich lays a
#: table out whole in memory (20,000 rows: 58 s, 284 MB); the other formats print every row
MAX_DISPLAY_ROWS = 1000

#: Dictionary key orders and conversation directions the variants table remembers (labels are
#: recomputed beyond)
KEYSET_CACHE = 4096

#: Ethernet MTU; IPv4 (20) + UDP (8) headers leave this many payload bytes before IP fragmentation
ETHERNET_MTU = 1500
UDP_IPV4_OVERHEAD = 28
UDP_PAYLOAD_MTU = ETHERNET_MTU - UDP_IPV4_OVERHEAD
