"""Coverage-guided fuzz targets (atheris) for every parser of untrusted bytes.

``python -m godot_dissect.fuzz.coverage TARGET [libFuzzer options]`` runs one target under
atheris (``pip install atheris``), its corpus seeded from the committed captures and the malformed
corpus (:func:`seeds`). A target returns normally for any input, good or bad: what it may raise
is a clean error (a ``ValueError`` such as DecodeError / TextParseError / CaptureError naming
offset and reason); anything else — a traceback, RecursionError, MemoryError — is a finding,
and atheris stops with the input that caused it.

Targets: ``decode`` (both dialect families, then the text and JSON writers on what decoded),
``text`` (the text notation parser), ``pcap`` (a whole capture file through ``read_pcap``: framing,
TCP reassembly, WebSocket, debugger, ENet, multiplayer, and the record writers), ``stream``
(structure-aware: the input cut into TCP segments / UDP datagrams on a Godot, debugger, WebSocket
or ENet port, in order or shuffled, written as a capture and read), ``scapy`` (the scapy
dissectors).
"""

from __future__ import annotations

import io
import random
import sys
from collections.abc import Callable, Iterator
from contextlib import suppress
from pathlib import Path

import atheris

from .. import jsonform
from ..codec import fast as _fast
from ..codec.decoder import decode_prefix
from ..errors import DecodeError
from ..pcap.packets import CaptureError
from ..pcap.reader import read_pcap
from ..spec.dialects import DIALECTS as SPEC_DIALECTS
from ..text.parser import from_text
from ..text.writer import to_text
from . import hostile
from .malformed import malformed_corpus
from .pcapout import ACK, PSH, SYN, PcapWriter
from .samples import SAMPLES

CAPTURES = Path(__file__).resolve().parents[2] / "captures"
#: captures longer than this seed the corpus with their first this many bytes (cut captures are fine)
SEED_BYTES = 64 * 1024
#: dialects the decode target tries: both families, single and double precision
DIALECTS = tuple(name for name, d in SPEC_DIALECTS.items() if not d.doc_only)


def _render(value: object, dialect: str) -> None:
    to_text(value, dialect)
    jsonform.dumps(value)


def _decode(data: bytes, dialect: str, compiled: bool) -> tuple[str, int] | str:
    """(JSON form, bytes used) or the error; ``compiled``: the C decoder, else the pure one."""
    saved = _fast.fast_decode_prefix
    if not compiled:
        _fast.fast_decode_prefix = None
    try:
        value, used = decode_prefix(data, dialect, allow_objects=True)
    except DecodeError as e:
        return f"{e.offset} {e.reason}"
    finally:
        _fast.fast_decode_prefix = saved
    _render(value, dialect)
    return jsonform.dumps(value), used


def target_decode(data: bytes) -> None:
    """Both decoders (compiled and pure) on every dialect; they must agree on value or error."""
    for d in DIALECTS:
        pure = _decode(data, d, compiled=False)
        if _fast.fast_decode_prefix is not None:
            c = _decode(data, d, compiled=True)
            if (isinstance(c, str), c if not isinstance(c, str) else None) != \
                    (isinstance(pure, str), pure if not isinstance(pure, str) else None):
                raise AssertionError(f"{d}: compiled decoder {str(c)[:200]} != pure {str(pure)[:200]}")


def target_text(data: bytes) -> None:
    text = data.decode("utf-8", "surrogateescape" if len(data) % 2 else "replace")
    for d in ("godot3", "godot4"):
        try:
            value = from_text(text, d)
        except ValueError:  # TextParseError, or a value that does not exist in the dialect
            continue
        _render(value, d)


def _read_all(source: io.BytesIO | str, **kw: object) -> None:
    try:
        for rec in read_pcap(source, **kw):  # type: ignore[arg-type]
            rec.to_jsonl()
            rec.text()
    except CaptureError:  # a clean "not a capture / cut in a record" naming its offset
        pass


def target_pcap(data: bytes) -> None:
    _read_all(io.BytesIO(data), ports=[hostile.PORT])


def target_stream(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    kind = fdp.ConsumeIntInRange(0, 4)
    port = (hostile.PORT, hostile.DEBUGGER_PORT, hostile.PORT, hostile.ENET_PORT, hostile.PORT)[kind]
    shuffle = fdp.ConsumeBool()
    cuts = [fdp.ConsumeIntInRange(1, 64) for _ in range(fdp.ConsumeIntInRange(1, 16))]
    payload = fdp.ConsumeBytes(fdp.remaining_bytes())
    out = io.BytesIO()
    w = PcapWriter(out)
    client, server = hostile.CLIENT, ("10.0.0.2", port)
    if kind >= 3:  # datagrams: ENet or plain Variants
        i = 0
        for n, cut in enumerate(cuts * (len(payload) // max(sum(cuts), 1) + 1)):
            if i >= len(payload):
                break
            w.udp(n * 1e-3, client, server, payload[i:i + cut * 8])
            i += cut * 8
    else:
        pieces, i = [], 0
        for cut in cuts * (len(payload) // max(sum(cuts), 1) + 1):
            if i >= len(payload):
                break
            pieces.append((i, payload[i:i + cut]))
            i += cut
        if kind == 2:  # WebSocket: the upgrade first
            head = (b"GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
            w.tcp(0, client, server, 999, 0, SYN)
            w.tcp(0, client, server, 1000, 0, PSH | ACK, head)
            base = 1000 + len(head)
        else:
            w.tcp(0, client, server, 999, 0, SYN)
            base = 1000
        if shuffle:
            random.Random(len(payload)).shuffle(pieces)
        for n, (off, piece) in enumerate(pieces):
            w.tcp(n * 1e-3, client, server, base + off, 0, PSH | ACK, piece)
    out.seek(0)
    _read_all(out, ports=[hostile.PORT], enet_ports=[hostile.ENET_PORT])


def target_scapy(data: bytes) -> None:
    from ..scapy import GodotVariant  # imported (and instrumented) by main() first when fuzzing it

    for d in ("godot3", "godot4"):
        pkt = GodotVariant(data, dialect=d)
        pkt.summary()
        with suppress(ValueError):  # DecodeError: malformed bytes, a clean answer
            pkt.to_value()


TARGETS: dict[str, Callable[[bytes], None]] = {
    "decode": target_decode, "text": target_text, "pcap": target_pcap, "stream": target_stream,
    "scapy": target_scapy,
}


def seeds(target: str) -> Iterator[bytes]:
    """The starting corpus of a target: captures (cut to SEED_BYTES), the malformed corpus, the
    hostile constructions' messages."""
    if target == "pcap":
        for p in sorted(CAPTURES.glob("*.pcap*")):
            yield p.read_bytes()[:SEED_BYTES]
        return
    if target == "text":
        for p in sorted((CAPTURES / "samples").glob("*.txt")):
            yield p.read_bytes()
        yield b'{ "a": [ Vector2( 1, 2 ), &"n", NodePath("a:b") ] }'
        for d in ("godot3", "godot4"):
            for value in SAMPLES.values():
                with suppress(ValueError, TypeError):  # a type the dialect does not have
                    yield to_text(value, d).encode("utf-8", "surrogatepass")
        return
    for d in ("godot3", "godot4"):
        for m in malformed_corpus(d)[::7]:
            yield m.data
    yield hostile.deep_key_dictionary(30)
    yield hostile.SURROGATE
    for p in sorted((CAPTURES / "samples").glob("*.bin")):
        yield p.read_bytes()


def write_corpus(target: str, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i, s in enumerate(seeds(target)):
        (folder / f"seed-{i:05d}").write_bytes(s)
    return folder


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[1] not in TARGETS:
        sys.exit(f"usage: python -m godot_dissect.fuzz.coverage {{{','.join(TARGETS)}}} CORPUS_DIR [libFuzzer options]")
    name = argv[1]
    rest = argv[2:]
    corpus = [a for a in rest if not a.startswith("-")]
    if corpus:
        write_corpus(name, Path(corpus[0]))
    sys.setrecursionlimit(1000)  # the default: a target must never need more
    if name == "scapy":
        import godot_dissect.scapy  # noqa: F401 - loaded before instrument_all, which covers what is loaded
    atheris.instrument_all()  # every module loaded so far (the package imports most of itself early)
    atheris.Setup([argv[0], *rest], TARGETS[name])
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
