"""Which dialect a conversation speaks, guessed from its bytes, with the evidence kept.

There is no version marker on the wire. Each candidate dialect decodes the conversation's first
messages; the one that decodes them all, each to exactly its length, and re-encodes them byte for
byte wins. Ties (only types common to every dialect, e.g. ints and strings) go to the real engines
first (godot4, then godot3) and are reported as ambiguous. A reading that fails only on our depth
limit (``spec.transports.MAX_DEPTH``) counts as a full reading of its dialect: Godot 3.2.3 has no
such limit, so a deep message is that dialect's, and a prefix reading of it in another dialect
must not win.

The transport classifier (``stream_head``, ``pdu_start``) is here too: the capture reader and the
scapy layers decide what a TCP conversation carries with the same functions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .codec import decode_prefix, encode
from .errors import ERR_OUT_OF_MEMORY, DecodeError
from .spec import get_dialect
from .spec.row import row
from .spec.transports import (
    BODY_ALIGN,
    CANDIDATES,
    HEURISTIC_DIALECTS,
    MAX_AMBIGUOUS_SAMPLES,
    MAX_DEPTH,
    MAX_HTTP_HEAD,
    MAX_PDU,
    MAX_SAMPLES,
    MIN_BODY,
    PREFIX_SIZE,
    read_length_prefix,
)

__all__ = ["CANDIDATES", "MAX_AMBIGUOUS_SAMPLES", "MAX_SAMPLES", "DialectGuess", "DialectVerdict", "depth_limited",
           "pdu_start", "plausible", "stream_head"]
#: (value, bytes used) of a reading; (DecodeError, -1) when the dialect rejects the bytes
Reading = tuple[Any, int]


@row
class DialectVerdict:
    dialect: str
    evidence: str
    ambiguous: bool
    #: the engine family is certain even if the build is not (e.g. godot3 vs godot3-double)
    family_clear: bool = True


@dataclass
class _Score:
    fails: int = 0
    exact: int = 0
    canonical: int = 0
    first_failure: str = ""
    too_deep: int = 0  # full readings that stopped only at our depth limit (counted in ``exact``)


@dataclass
class DialectGuess:
    candidates: tuple[str, ...] = CANDIDATES
    scores: dict[str, _Score] = field(default_factory=dict)
    samples: int = 0
    discriminating: int = 0

    def __post_init__(self) -> None:
        self.scores = {d: _Score() for d in self.candidates}

    def add(self, body: bytes) -> dict[str, Reading]:
        """Score one message; each candidate's reading of it: (value, bytes used), or the
        DecodeError and -1."""
        self.samples += 1
        outcome: dict[str, tuple[bool, bool, bool]] = {}
        readings: dict[str, Reading] = {}
        for d in self.candidates:
            s = self.scores[d]
            try:
                v, used = readings[d] = decode_prefix(body, d, allow_objects=True, max_depth=MAX_DEPTH)
            except DecodeError as e:
                readings[d] = (e, -1)
                if depth_limited(e):  # read as far as our limit lets it: a full reading
                    s.exact += 1
                    s.too_deep += 1
                    outcome[d] = (True, True, False)
                    continue
                s.fails += 1
                s.first_failure = s.first_failure or f"{e.reason} at offset {e.offset}"
                outcome[d] = (False, False, False)
                continue
            exact = used == len(body)
            canon = False
            if exact:
                s.exact += 1
                try:
                    canon = encode(v, d, full_objects=True) == body
                except ValueError:
                    canon = False
                if canon:
                    s.canonical += 1
            outcome[d] = (True, exact, canon)
        # a message tells the engines apart when the best readings all belong to one engine family
        best = max(outcome.values(), key=lambda o: (o[1], o[0], o[2]))
        families = {_family(d) for d, o in outcome.items() if o == best and not get_dialect(d).doc_only}
        if len(families) == 1:
            self.discriminating += 1
        return readings

    @property
    def decided(self) -> bool:
        # ties left after two telling messages are between equivalent readings (e.g. godot3 and
        # godot3-double without any PoolRealArray): the preference order settles them
        if self.discriminating >= 2 or self.samples >= MAX_AMBIGUOUS_SAMPLES:
            return True
        return self.samples >= MAX_SAMPLES and self.discriminating >= 1

    def _rank(self) -> list[str]:
        # a framed message is one Variant: reading it to exactly its length is the strongest sign;
        # decoding only a prefix is no better than failing
        return sorted(self.candidates, key=lambda d: (-self.scores[d].exact, self.scores[d].fails,
                                                      -self.scores[d].canonical, self.candidates.index(d)))

    def _unique_best(self) -> bool:
        r = self._rank()
        a, b = self.scores[r[0]], self.scores[r[1]]
        return (a.exact, a.fails, a.canonical) != (b.exact, b.fails, b.canonical)

    def verdict(self, elsewhere: Mapping[str, int] | None = None) -> DialectVerdict:
        """The best dialect; ties go to what ``elsewhere`` (other conversations of the same
        capture, dialect -> count of clear verdicts) speaks most, then to the preference order."""
        ranked = self._rank()
        s0 = self.scores[ranked[0]]
        tied = [d for d in ranked if (self.scores[d].exact, self.scores[d].fails, self.scores[d].canonical)
                == (s0.exact, s0.fails, s0.canonical)]
        hint = ""
        if len(tied) > 1 and elsewhere and any(elsewhere.get(d) for d in tied):
            pick = max(tied, key=lambda d: (elsewhere.get(d, 0), -tied.index(d)))
            if pick != ranked[0]:
                hint = f"; {pick} chosen because other conversations in this capture speak it"
            ranked.remove(pick)
            ranked.insert(0, pick)
        best = ranked[0]
        s = self.scores[best]
        ambiguous = len(tied) > 1
        parts = [f"{best}: {s.exact}/{self.samples} messages decode exactly, {s.canonical} re-encode byte-identically"]
        if s.too_deep:
            parts.append(f"{s.too_deep} of them nest deeper than our limit of {MAX_DEPTH} levels (Godot 3 has none)")
        for d in ranked[1:]:
            o = self.scores[d]
            if o.fails:
                parts.append(f"{d} rejects {o.fails} ({o.first_failure})")
            elif (o.exact, o.canonical) != (s.exact, s.canonical):
                parts.append(f"{d}: {o.exact} exact, {o.canonical} identical")
        if ambiguous:
            parts.append("ambiguous: " + ", ".join(tied) + " read these bytes alike" + hint)
        engines = {_family(d) for d in tied if not get_dialect(d).doc_only}
        return DialectVerdict(best, "; ".join(parts), ambiguous, family_clear=len(engines) <= 1)


def reconsider(verdict: DialectVerdict, guess: DialectGuess | None, body: bytes,
               elsewhere: Counter | None = None) -> DialectVerdict | None:
    """A message the verdict's dialect rejects: switch to a dialect that reads it exactly and read
    every earlier message as well as the verdict did (earlier messages were ambiguous)."""
    if guess is None:
        return None
    guess.add(body)
    new = guess.verdict(elsewhere)
    if new.dialect == verdict.dialect:
        return None
    try:
        if decode_prefix(body, new.dialect, allow_objects=True, max_depth=MAX_DEPTH)[1] != len(body):
            return None
    except DecodeError:
        return None
    return DialectVerdict(new.dialect, new.evidence + f" (switched from {verdict.dialect} at a message "
                                               f"{verdict.dialect} rejects)", new.ambiguous, new.family_clear)


#: a body whose first byte (the type id, ``spec.layouts.TYPE_MASK``) is this or more is no Variant
#: in any dialect ``plausible`` tries; checked before decoding when scanning for a PDU
TYPE_ID_LIMIT = max(get_dialect(d).variant_max for d in HEURISTIC_DIALECTS)


def _family(dialect: str) -> int:
    return get_dialect(dialect).family


def depth_limited(e: DecodeError) -> bool:
    """Did the decoder stop only because the value nests deeper than our limit?"""
    return e.code == ERR_OUT_OF_MEMORY


def plausible(body: bytes) -> bool:
    """Does ``body`` decode to exactly its length in some dialect (or up to our depth limit)?
    (the heuristic for unknown ports)"""
    if len(body) < MIN_BODY or len(body) % BODY_ALIGN:
        return False
    for d in HEURISTIC_DIALECTS:
        try:
            if decode_prefix(body, d, allow_objects=True, max_depth=MAX_DEPTH)[1] == len(body):
                return True
        except DecodeError as e:
            if depth_limited(e):
                return True
    return False


def pdu_start(payload: bytes) -> str:
    """"yes" (a whole plausible PDU), "maybe" (a length prefix whose body has not all arrived)
    or "no", for the first bytes of a TCP stream."""
    n = read_length_prefix(payload)
    if n is None or n < MIN_BODY or n > MAX_PDU or n % BODY_ALIGN:
        return "no"
    if len(payload) - PREFIX_SIZE >= n:
        return "yes" if plausible(payload[PREFIX_SIZE:PREFIX_SIZE + n]) else "no"
    if len(payload) >= PREFIX_SIZE + 2 and (payload[PREFIX_SIZE + 1] != 0  # header byte 1 is 0 in what engines write
                                            or payload[PREFIX_SIZE] >= TYPE_ID_LIMIT):
        return "no"
    return "maybe"


def http_head(head: bytes) -> str | None:
    """What the first bytes of a TCP stream say about HTTP: "websocket" (an upgrade), "http"
    (other HTTP), "more" (could still become either: wait for more bytes), or None (no HTTP)."""
    head = head[:MAX_HTTP_HEAD]
    low = head[:5].lower()
    if len(head) < 5 and (b"get ".startswith(low[:4]) or b"http/".startswith(low)):
        return "more"
    if not low.startswith((b"get ", b"http/")):  # HTTP_STARTS, any case
        return None
    if b"\r\n\r\n" not in head and len(head) < MAX_HTTP_HEAD:
        return "more"
    return "websocket" if b"upgrade: websocket" in head.lower() else "http"


def stream_head(head: bytes, ports: set[int], known_ports: set[int], debugger_ports: set[int],
                heuristics: bool) -> str | None:
    """The framing of a TCP conversation from its first bytes and ports: "websocket",
    "debugger", "stream", or None (not Godot). ``head`` is complete (``http_head`` is not "more")."""
    http = http_head(head)
    if http == "websocket":
        return "websocket"
    if http is not None:
        return None
    if ports & debugger_ports:
        return "debugger"
    if ports & known_ports:
        return "stream"
    return "stream" if heuristics else None


def websocket_multiplayer(first: bytes, direction: str) -> tuple[int, str] | None:
    """(Godot major, evidence) when the first binary message of a WebSocket conversation starts a
    multiplayer session: Godot 4 sends the client its peer id (exactly 4 bytes, id >= 2); Godot 3
    puts a 9-byte header on every message, the server's first being SYS_ID."""
    from .multiplayer.layout import Scope, read_items
    from .spec.multiplayer import WS3_HEADER, WS3_SYS, WS3_TYPES, WS4_MIN_PEER_ID, WS4_PEER_ID

    if direction == "s2c" and len(first) == WS4_PEER_ID.exact_size:
        ids = Scope()
        read_items(WS4_PEER_ID.items, first, 0, len(first), ids)
        peer = ids.values["peer"]
        if peer >= WS4_MIN_PEER_ID:
            return 4, (f"godot4 WebSocketMultiplayerPeer: the server's first binary message is 4 bytes, "
                       f"the client's peer id {peer}")
    head = WS3_HEADER.min_size
    if len(first) >= head and first[0] in WS3_TYPES:
        scope = Scope()
        read_items(WS3_HEADER.items, first, 0, head, scope)
        h = scope.values
        sender, target = h["from"], h["to"]
        if h["type"] != 0 and direction == "s2c" and sender == 1 and target == 0 \
                and len(first) == head + WS3_SYS.min_size:
            read_items(WS3_SYS.items, first, head, len(first), scope)
            return 3, (f"godot3 WebSocketMultiplayerPeer: 9-byte header, the server's first message is "
                       f"{WS3_TYPES[h['type']]} {h['peer']}")
        if first[0] == 0 and sender >= 1 and len(first) > head:
            from .multiplayer.godot3 import decode_packet

            if not decode_packet(first[head:]).error:
                return 3, "godot3 WebSocketMultiplayerPeer: 9-byte header and a MultiplayerAPI packet"
    if direction == "c2s" and not plausible(first):
        # the client's side seen first (a capture whose directions are not interleaved): a packet
        # only a SceneMultiplayer client starts with, that is no Variant
        from .multiplayer.godot4 import decode_packet as decode4

        m = decode4(first)
        if not m.error and m.kind in CLIENT_FIRST_KINDS:
            return 4, f"godot4 SceneMultiplayer: the client's first binary message is a {m.command} packet"
    return None


#: Godot 4 packets a client can send first: the path cache before its first call, a call with the
#: path inline, authentication
CLIENT_FIRST_KINDS = ("simplify_path", "rpc", "sys")


def enet_godot_major(packet: bytes, channel: int | None, direction: str) -> int | None:
    """3 or 4 when an ENet packet reads cleanly as exactly one Godot version's multiplayer packet
    (for captures that start after the CONNECT that says it), else None."""
    from .multiplayer.session import MultiplayerSession

    ok = []
    for major in (3, 4):
        msgs = MultiplayerSession(major, "enet").decode(packet, direction, channel)
        if msgs and not any(m.error for m in msgs):
            ok.append(major)
    return ok[0] if len(ok) == 1 else None
