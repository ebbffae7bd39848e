"""Fuzz cases: what the generator hands to the sender, and the seeded generator itself.

``CaseGenerator(dialect, seed, ...).case(i)`` is a pure function of (dialect, seed, seeds, i):
case ``i`` can be made again from the numbers in a reproducer. Strategies:

- ``valid``: a random valid value of any type (boundary numbers, every type, typed containers);
- ``corpus``: the spec-derived malformed corpus (``malformed.malformed_corpus``), in order, then again;
- ``mutate``: 1-3 field-aware mutations (``mutate.py``) of a seed value's bytes; seeds are the
  per-type samples, random valid values, values from ``.tscn``/``.tres`` files and captures;
- ``deep``: Arrays / Dictionaries (value or key side) / typed Arrays / full Objects nested
  100,000-1,000,000 levels (clipped to what the framing can carry), and just around the engine's
  own limit;
- ``huge``: counts and lengths that promise far more than the bytes there;
- ``object``: full Objects (class name + properties), for servers that decode with allow_objects;
- ``frame``: (stream framings) a length prefix that lies: short, long, negative, huge;
- ``conversation``: a captured conversation replayed with one message mutated.
"""

from __future__ import annotations

import bisect
import itertools
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import values as V
from ..codec import encode
from ..spec.dialects import Dialect, get_dialect
from ..spec.transports import MAX_DEPTH
from .fields import COUNT, LENGTH, FieldMap, field_map
from .generate import NEST_SHAPES, ValueGenerator, nest, nest_levels, nest_units
from .malformed import Mutant, malformed_corpus
from .mutate import BIG_WORDS, mutate
from .samples import SAMPLES

#: largest Variant each framing can carry (UDP/IPv4 datagram; Godot 4 debugger's 8 MiB - 4)
MAX_PAYLOAD = {"udp": 65507, "stream": 16 << 20, "debugger3": (8 << 20) - 64, "debugger4": (8 << 20) - 64,
               "none": 16 << 20}

DEFAULT_WEIGHTS = {"mutate": 40, "corpus": 14, "valid": 10, "deep": 4, "huge": 6, "object": 5, "frame": 3,
                   "conversation": 20}
STRATEGIES = tuple(DEFAULT_WEIGHTS)
DEEP_DEPTHS = (100_000, 150_000, 250_000, 500_000, 1_000_000)
BLOCK = 64  # cases per random stream
POOL = 4096  # valid values made per run (on first use), drawn by the valid and mutate strategies


@dataclass
class Case:
    index: int
    strategy: str
    name: str
    payload: bytes  # the fuzzed Variant (unframed)
    allow_objects: bool = False  # decode it with allow_objects (differential mode)
    recipe: dict[str, Any] | None = None  # how to rebuild it with other numbers (minimiser)
    before: tuple[bytes, ...] = ()  # conversation: messages sent before the fuzzed one
    after: tuple[bytes, ...] = ()  # and after it
    frame_length: int | None = None  # stream framings: length prefix to write instead of the true one
    meta: dict[str, Any] = field(default_factory=dict)  # framing choices (debugger message name, ...)

    @property
    def messages(self) -> list[bytes]:
        return [*self.before, self.payload, *self.after]

    def with_payload(self, payload: bytes, **changes: Any) -> Case:
        d = dict(self.__dict__, payload=payload, **changes)
        return Case(**d)

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "strategy": self.strategy, "name": self.name,
                "allow_objects": self.allow_objects, "recipe": self.recipe, "frame_length": self.frame_length,
                "meta": self.meta, "payload_size": len(self.payload)}


class _Seed:
    """Bytes to mutate, with their field map made on first use."""

    __slots__ = ("_fmap", "data", "name", "dialect")

    def __init__(self, name: str, data: bytes, dialect: Dialect) -> None:
        self.name, self.data, self.dialect = name, data, dialect
        self._fmap: FieldMap | None = None

    @property
    def fmap(self) -> FieldMap:
        if self._fmap is None:
            self._fmap = field_map(self.data, self.dialect)
        return self._fmap


class CaseGenerator:
    """Deterministic, seeded case source for one dialect and framing."""

    def __init__(self, dialect: Dialect | str, seed: int = 0, *, framing: str = "udp",
                 seed_values: Iterable[tuple[str, Any]] = (), conversations: Sequence[Sequence[bytes]] = (),
                 weights: dict[str, float] | None = None, max_payload: int | None = None,
                 deep_depths: Sequence[int] = DEEP_DEPTHS, allow_objects: bool = True) -> None:
        self.d = get_dialect(dialect)
        self.seed = seed
        self.framing = framing
        self.max_payload = max_payload or MAX_PAYLOAD.get(framing, MAX_PAYLOAD["none"])
        self.deep_depths = tuple(deep_depths)
        self.allow_objects = allow_objects
        self.values = ValueGenerator(self.d)
        self.objects = ValueGenerator(self.d, full_objects=True)
        self.corpus: list[Mutant] = malformed_corpus(self.d)
        self.conversations = [list(c) for c in conversations if c]
        w = dict(DEFAULT_WEIGHTS if weights is None else weights)
        if not self.conversations:
            w.pop("conversation", None)
        if framing not in ("stream", "debugger3", "debugger4"):
            w.pop("frame", None)
        if not allow_objects:
            w.pop("object", None)
        if not self.deep_depths:
            w.pop("deep", None)
        self.names = [k for k, v in w.items() if v > 0]
        if not self.names:
            raise ValueError("no fuzzing strategy left (conversation needs --seed-pcap, frame a stream framing)")
        self.weights = [w[k] for k in self.names]
        self._cum = list(itertools.accumulate(self.weights))
        self._rng = random.Random(0)
        self._next = -1
        self.shapes = [s for s in NEST_SHAPES if nest_units(self.d, s) is not None
                       and (allow_objects or s != "object")]
        # seeds: one sample per type, the user's values, random valid values
        self.seeds: list[_Seed] = []
        for e in self.d.entries:
            try:
                self._add_seed(self.seeds, f"sample {e.name}", encode(SAMPLES.get(e.key), self.d))
            except (ValueError, TypeError):
                continue
        self.user_seeds: list[_Seed] = []
        for name, v in seed_values:
            try:
                self._add_seed(self.user_seeds, name, encode(v, self.d, full_objects=True))
            except (ValueError, TypeError):
                continue
        rng = random.Random(f"seeds:{seed}")
        for i in range(64):
            _, data = self.values.encoded(rng)
            self._add_seed(self.seeds, f"random value #{i}", data)

        self._sized: list[_Seed] | None = None
        # valid values and full Objects, each made on first use from (seed, slot): same run, same bytes
        self._valid_pool: dict[int, tuple[str, bytes, _Seed]] = {}
        self._object_pool: dict[int, tuple[str, bytes, _Seed]] = {}

    def _add_seed(self, into: list[_Seed], name: str, data: bytes) -> None:
        if len(data) <= self.max_payload:
            into.append(_Seed(name, data, self.d))

    # -- the schedule ------------------------------------------------------------------------------
    def strategy_for(self, i: int, rng: random.Random) -> str:
        if i < len(self.names):  # each strategy once first, in a fixed order, so every run covers them
            return self.names[i]
        return self.names[bisect.bisect(self._cum, rng.random() * self._cum[-1])]

    def case(self, i: int) -> Case:
        """Case ``i``. Cases come in blocks of ``BLOCK`` sharing one random stream (seeding costs more than
        making a case); asking for them in order is cheapest."""
        blk = i // BLOCK
        if self._next != i or i % BLOCK == 0:
            self._rng = random.Random(f"{self.seed}:{blk}")
            self._next = blk * BLOCK
            while self._next < i:
                self._make(self._next, self._rng)
                self._next += 1
        c = self._make(i, self._rng)
        self._next = i + 1
        return c

    def _make(self, i: int, rng: random.Random) -> Case:
        strategy = self.strategy_for(i, rng)
        c = getattr(self, "_" + strategy)(i, rng)
        if c.strategy == "mutate" and self.framing in ("debugger3", "debugger4"):
            c.meta.setdefault("wrap", rng.random() < 0.7)
        return c

    def cases(self, start: int = 0) -> Iterable[Case]:
        i = start
        while True:
            yield self.case(i)
            i += 1

    # -- strategies ----------------------------------------------------------------------------------
    def _pick_seed(self, rng: random.Random) -> _Seed:
        r = rng.random()
        if self.user_seeds and r < 0.5:
            return rng.choice(self.user_seeds)
        if r < 0.75:
            return self._valid_value(rng.randrange(POOL))[2]
        return rng.choice(self.seeds)

    def _valid_value(self, slot: int) -> tuple[str, bytes, _Seed]:
        got = self._valid_pool.get(slot)
        if got is not None:
            return got
        rng = random.Random(f"valid:{self.seed}:{slot}")
        name, data = "", b""
        if rng.random() < 0.15:
            v = self.values.edge_keys(rng)
            try:
                data = encode(v, self.d)
                kname = self.d.by_key(V.type_key(next(iter(v)))).name  # type: ignore[union-attr]
                name = f"valid Dictionary keyed by {len(v)} edge {kname} values"
            except (ValueError, TypeError):
                data = b""
        if not data or len(data) > self.max_payload:
            e = rng.choice(self.d.entries)
            _, data = self.values.encoded(rng, e)
            name = f"valid {e.name}"
            if len(data) > self.max_payload:
                data = encode(None, self.d)
        got = self._valid_pool[slot] = (name, data, _Seed(f"{name} #{slot}", data, self.d))
        return got

    def _mutate(self, i: int, rng: random.Random) -> Case:
        s = self._pick_seed(rng)
        data, done = mutate(s.data, s.fmap, rng, self.d, n_ops=rng.choice((1, 1, 1, 2, 3)))
        return Case(i, "mutate", f"{s.name}: {'; '.join(done) or 'unchanged'}", data[:self.max_payload],
                    recipe={"seed": s.name, "ops": done})

    def _valid(self, i: int, rng: random.Random) -> Case:
        name, data, _ = self._valid_value(rng.randrange(POOL))
        return Case(i, "valid", name, data)

    def _corpus(self, i: int, rng: random.Random) -> Case:
        m = self.corpus[(i * 7919) % len(self.corpus)] if i >= len(self.names) else self.corpus[0]
        return Case(i, "corpus", f"corpus: {m.name}", m.data, allow_objects=m.allow_objects)

    def _deep(self, i: int, rng: random.Random) -> Case:
        first = i < len(self.names)  # the first deep case of a run: the plainest, Arrays
        shape = "array" if first else rng.choice(self.shapes)
        pre, leaf, suf = nest_units(self.d, shape)  # type: ignore[misc]
        fit = (self.max_payload - len(leaf)) // (len(pre) + len(suf))
        limit = self.d.engine_depth_limit or MAX_DEPTH
        depths = [*self.deep_depths, limit - 1, limit, limit + 1]
        depth = min(min(self.deep_depths) if first else rng.choice(depths), fit)
        data = nest(self.d, shape, depth)
        assert data is not None
        return Case(i, "deep", f"{shape} nested {nest_levels(shape, depth)} levels", data,
                    allow_objects=shape == "object", recipe={"nest": shape, "depth": depth})

    def _huge(self, i: int, rng: random.Random) -> Case:
        if self._sized is None:
            self._sized = [s for s in self.seeds + self.user_seeds if s.fmap.by_role(COUNT, LENGTH)]
        s = rng.choice(self._sized)
        f = rng.choice(s.fmap.by_role(COUNT, LENGTH))
        buf = bytearray(s.data)
        v = rng.choice(BIG_WORDS)
        buf[f.offset:f.offset + 4] = (v & 0xFFFFFFFF).to_bytes(4, "little")
        cut = rng.choice((len(buf), f.offset + 4, f.offset + 8))
        return Case(i, "huge", f"{s.name}: {f.role} @{f.offset} = {v:#x}, {cut} bytes", bytes(buf[:cut]),
                    recipe={"seed": s.name, "field": f.offset, "value": v})

    def _object(self, i: int, rng: random.Random) -> Case:
        slot = rng.randrange(POOL // 4)
        got = self._object_pool.get(slot)
        if got is None:
            orng = random.Random(f"object:{self.seed}:{slot}")
            for _ in range(20):
                v = self.objects.full_object(orng, 0)
                try:
                    data = encode(v, self.d, full_objects=True)
                    break
                except (ValueError, TypeError):
                    continue
            else:
                v, data = V.Object(""), encode(V.Object(""), self.d, full_objects=True)
            name = f"full Object {v.class_name!r} with {len(v.properties)} properties"
            got = self._object_pool[slot] = (name, data, _Seed(name, data, self.d))
        name, data, seed = got
        if rng.random() < 0.5:
            data, done = mutate(data, seed.fmap, rng, self.d)
            name += ": " + "; ".join(done)
        return Case(i, "object", name, data[:self.max_payload], allow_objects=True)

    def _frame(self, i: int, rng: random.Random) -> Case:
        s = self._pick_seed(rng)
        n = len(s.data)
        lie = rng.choice((0, n - 1, n + 1, n + 4, n * 2, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 3, 1 << 24))
        return Case(i, "frame", f"{s.name}: length prefix {lie & 0xFFFFFFFF:#x} for {n} bytes", s.data,
                    frame_length=lie & 0xFFFFFFFF)

    def _conversation(self, i: int, rng: random.Random) -> Case:
        ci = rng.randrange(len(self.conversations))
        conv = self.conversations[ci]
        j = rng.randrange(len(conv))
        data, done = mutate(conv[j], field_map(conv[j], self.d), rng, self.d, n_ops=rng.choice((1, 1, 2)))
        return Case(i, "conversation", f"conversation {ci} message {j}/{len(conv)}: {'; '.join(done)}",
                    data[:self.max_payload], before=tuple(conv[:j]), after=tuple(conv[j + 1:]),
                    recipe={"conversation": ci, "message": j, "ops": done})


# -- seeds from files ---------------------------------------------------------------------------------

def seeds_from_tscn(paths: Iterable[str]) -> list[tuple[str, Any]]:
    """Every property and attribute value of every section of the text scenes/resources given."""
    from ..tscn import load

    out: list[tuple[str, Any]] = []

    def plain(v: Any) -> Any:
        if isinstance(v, V.ResourceRef):
            return None
        if isinstance(v, list):
            return type(v)([plain(x) for x in v]) if type(v) is list else v
        if isinstance(v, dict) and type(v) is dict:
            return {k: plain(x) for k, x in v.items()}
        return v

    for p in paths:
        doc = load(p)
        sections = [doc.descriptor, *(s for s in doc.sections if s is not doc.descriptor)]
        for sec in sections:
            for k, v in (*sec.attrs.items(), *sec.properties.items()):
                out.append((f"{p} [{sec.tag}] {k}", plain(v)))
    return out


def conversations_from_pcap(path: str, dialect: str = "auto", ports: Iterable[int] = ()) -> tuple[
        list[list[bytes]], list[tuple[str, Any]]]:
    """The client-to-server messages of each conversation in a capture, and every value seen."""
    from ..pcap.reader import read_pcap

    convs: dict[tuple, list[bytes]] = {}
    values: list[tuple[str, Any]] = []
    for rec in read_pcap(path, dialect, ports):
        if rec.kind not in ("variant", "debugger") or not rec.raw:
            continue
        values.append((f"{path} frame {rec.frame}", rec.value))
        if rec.direction == "c2s" and rec.kind == "variant":
            key = (rec.transport, rec.src, rec.sport, rec.dst, rec.dport)
            convs.setdefault(key, []).append(rec.raw)
    return list(convs.values()), values
