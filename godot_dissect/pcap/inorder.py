"""The reader's common TCP step compiled: a segment that continues its direction's stream in order
(``tcp.TcpDirection.add``: one chunk, no gap) fed to a synchronised length-prefix framer
(``framing.LengthPrefixFramer.feed``), in C (``_stream.c``).

``in_order(tcp, framer, seg, line)`` returns the PDUs those two calls would return, leaving both objects
as they would, or None, having changed nothing, for every other case (out-of-order or retransmitted
bytes, held segments, a framer resynchronising or skipping, a WebSocket framer, a length past
``MAX_PDU``): the caller then takes the Python path, which stays the one reference.

``line``: None, or ``(write, head)``: a ``records.variant_line_writer`` (or export's
``dataset.arrow.variant_row_writer``) and its seven head arguments (src, sport, dst, dport, transport,
direction, dialect); each PDU is then written by ``write(body, frame, time, *head, offset, wire)`` and what
it returns (a line, a str; or a row, a tuple) is the item in its place, until
the writer leaves one to the reader (returns None): that PDU and the rest of the segment's are Pdus.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ..spec.transports import LENGTH_PREFIX, MAX_PDU, WS_BINARY
from .framing import LengthPrefixFramer, Pdu
from .packets import Segment
from .tcp import TcpDirection

__all__ = ["in_order"]


def _compiled() -> Callable[[TcpDirection, LengthPrefixFramer, Segment, Any], list[Any] | None] | None:
    """The compiled step, or None when not built, when ``GODOT_DISSECT_PURE`` is set, or when the
    spec's length prefix is not the u32 little-endian word the C reads."""
    if os.environ.get("GODOT_DISSECT_PURE", "") not in ("", "0") or LENGTH_PREFIX.format != "<I":
        return None
    try:
        from ._stream import InOrder
    except ImportError:
        return None
    return InOrder(LengthPrefixFramer, Pdu, MAX_PDU, WS_BINARY)


#: the step the reader uses (None: the Python path only)
in_order = _compiled()
