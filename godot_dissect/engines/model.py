"""Data types of the engine oracle: what goes in (cases), what comes out (results), and errors."""

from __future__ import annotations

from dataclasses import dataclass, field

# Godot's `Error` enum (core/error/error_list.h); identical in 3.x and 4.x.
ERROR_CODES: dict[str, int] = {
    name: code
    for code, name in enumerate(
        """OK FAILED ERR_UNAVAILABLE ERR_UNCONFIGURED ERR_UNAUTHORIZED ERR_PARAMETER_RANGE_ERROR
        ERR_OUT_OF_MEMORY ERR_FILE_NOT_FOUND ERR_FILE_BAD_DRIVE ERR_FILE_BAD_PATH ERR_FILE_NO_PERMISSION
        ERR_FILE_ALREADY_IN_USE ERR_FILE_CANT_OPEN ERR_FILE_CANT_WRITE ERR_FILE_CANT_READ
        ERR_FILE_UNRECOGNIZED ERR_FILE_CORRUPT ERR_FILE_MISSING_DEPENDENCIES ERR_FILE_EOF ERR_CANT_OPEN
        ERR_CANT_CREATE ERR_QUERY_FAILED ERR_ALREADY_IN_USE ERR_LOCKED ERR_TIMEOUT ERR_CANT_CONNECT
        ERR_CANT_RESOLVE ERR_CONNECTION_ERROR ERR_CANT_ACQUIRE_RESOURCE ERR_CANT_FORK ERR_INVALID_DATA
        ERR_INVALID_PARAMETER ERR_ALREADY_EXISTS ERR_DOES_NOT_EXIST ERR_DATABASE_CANT_READ
        ERR_DATABASE_CANT_WRITE ERR_COMPILATION_FAILED ERR_METHOD_NOT_FOUND ERR_LINK_FAILED
        ERR_SCRIPT_FAILED ERR_CYCLIC_LINK ERR_INVALID_DECLARATION ERR_DUPLICATE_SYMBOL ERR_PARSE_ERROR
        ERR_BUSY ERR_SKIP ERR_HELP ERR_BUG ERR_PRINTER_ON_FIRE""".split()  # noqa: SIM905 (compact on purpose)
    )
}


class EngineUnavailable(RuntimeError):
    """The engine is not installed or cannot run on this machine; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class EncodeCase:
    """A value to encode, written as a GDScript expression in the target engine's syntax.

    ``setup`` holds statements run first in the same function (its locals are visible to ``expr``);
    use tabs for nested blocks.  ``expr`` must be a single line.
    """

    name: str
    expr: str
    setup: str = ""


@dataclass(frozen=True)
class DecodeCase:
    """Bytes to hand to the engine's Variant decoder."""

    data: bytes
    allow_objects: bool = False


@dataclass(frozen=True)
class EncodeResult:
    """What the engine made of one EncodeCase.

    ``error`` is None on success, else "compile" (the case does not compile), "runtime" (a script
    error aborted it; not detectable in release builds such as the Godot 4 web template, where a
    failing expression silently yields null), "crash" or "timeout".
    """

    name: str
    data: bytes | None = None  # var_to_bytes(v) / var2bytes(v)
    data_full: bytes | None = None  # var_to_bytes_with_objects(v) / var2bytes(v, true)
    text: str | None = None  # var_to_str(v) / var2str(v)
    type_id: int | None = None  # typeof(v)
    error: str | None = None
    messages: tuple[str, ...] = ()  # engine errors/warnings printed while handling this case

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class DecodeResult:
    """What the engine made of one DecodeCase.

    ``error`` is the Godot Error code: 0 when accepted, the decoder's code when rejected, None when
    rejected but the engine printed no recognisable code (or it crashed: see ``crashed``).
    """

    index: int
    ok: bool
    error: int | None
    text: str | None = None  # var_to_str(result)
    type_id: int | None = None  # typeof(result)
    reencoded: bytes | None = None  # var_to_bytes(result)
    used: int | None = None  # bytes consumed (Godot 4 only)
    crashed: bool = False
    messages: tuple[str, ...] = ()


@dataclass
class ProbeResult:
    version: str
    encoded: dict[str, EncodeResult] = field(default_factory=dict)
    decoded: list[DecodeResult] = field(default_factory=list)
    stderr: str = ""  # engine stderr without the protocol lines
    stdout: str = ""
    runs: int = 0  # engine processes started (more than 1 after a crash)
    seconds: float = 0.0


class EngineCrashed(RuntimeError):
    """The engine died in a way that cannot be pinned on one case, or too many cases crashed it.

    ``partial`` holds every result obtained before giving up.
    """

    def __init__(self, reason: str, partial: ProbeResult) -> None:
        super().__init__(reason)
        self.reason = reason
        self.partial = partial
