"""Which dialect a conversation speaks, guessed from its bytes, with the evidence kept.

There is no version marker on the wire. Each candidate dialect decodes the conversation's first
messages; the one that decodes them all, each to exactly its length, and re-encodes them byte for
byte wins. Ties (only types common to every dialect, e.g. ints and strings) go to the real engines
first (godot4, then godot3) and are reported as ambiguous.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .codec import decode_prefix, encode
from .errors import DecodeError

#: preference order on ties: real engines before builds and paper dialects
CANDIDATES = ("godot4", "godot3", "godot4-double", "godot3-double", "godot4-doc-table")
#: messages a guess looks at before it must decide
MAX_SAMPLES = 8


@dataclass(frozen=True)
class Verdict:
    dialect: str
    evidence: str
    ambiguous: bool


@dataclass
class _Score:
    fails: int = 0
    exact: int = 0
    canonical: int = 0
    first_failure: str = ""


@dataclass
class DialectGuess:
    candidates: tuple[str, ...] = CANDIDATES
    scores: dict[str, _Score] = field(default_factory=dict)
    samples: int = 0
    discriminating: int = 0

    def __post_init__(self) -> None:
        self.scores = {d: _Score() for d in self.candidates}

    def add(self, body: bytes) -> None:
        self.samples += 1
        outcomes = set()
        for d in self.candidates:
            s = self.scores[d]
            try:
                v, used = decode_prefix(body, d, allow_objects=True)
            except DecodeError as e:
                s.fails += 1
                s.first_failure = s.first_failure or f"{e.reason} at offset {e.offset}"
                outcomes.add("fail")
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
            outcomes.add(("exact" if exact else "short") + ("+canon" if canon else ""))
        if len(outcomes) > 1:
            self.discriminating += 1

    @property
    def decided(self) -> bool:
        # ties left after two telling messages are between equivalent readings (e.g. godot3 and
        # godot3-double without any PoolRealArray): the preference order settles them
        return self.samples >= MAX_SAMPLES or self.discriminating >= 2

    def _rank(self) -> list[str]:
        return sorted(self.candidates, key=lambda d: (self.scores[d].fails, -self.scores[d].exact,
                                                      -self.scores[d].canonical, self.candidates.index(d)))

    def _unique_best(self) -> bool:
        r = self._rank()
        a, b = self.scores[r[0]], self.scores[r[1]]
        return (a.fails, a.exact, a.canonical) != (b.fails, b.exact, b.canonical)

    def verdict(self) -> Verdict:
        ranked = self._rank()
        best = ranked[0]
        s = self.scores[best]
        ambiguous = not self._unique_best()
        parts = [f"{best}: {s.exact}/{self.samples} messages decode exactly, {s.canonical} re-encode byte-identically"]
        for d in ranked[1:]:
            o = self.scores[d]
            if o.fails:
                parts.append(f"{d} rejects {o.fails} ({o.first_failure})")
            elif (o.exact, o.canonical) != (s.exact, s.canonical):
                parts.append(f"{d}: {o.exact} exact, {o.canonical} identical")
        if ambiguous:
            tied = [d for d in ranked if (self.scores[d].fails, self.scores[d].exact, self.scores[d].canonical)
                    == (s.fails, s.exact, s.canonical)]
            parts.append("ambiguous: " + ", ".join(tied) + " read these bytes alike")
        return Verdict(best, "; ".join(parts), ambiguous)


def plausible(body: bytes) -> bool:
    """Does ``body`` decode to exactly its length in some dialect? (the heuristic for unknown ports)"""
    if len(body) < 4 or len(body) % 4:
        return False
    for d in ("godot4", "godot3"):
        try:
            if decode_prefix(body, d, allow_objects=True)[1] == len(body):
                return True
        except DecodeError:
            pass
    return False
