"""Errors with enough context to find the bad byte."""

from __future__ import annotations

#: Godot ``Error`` names for the codes the decoder can fail with (same values in 3.x and 4.x).
GODOT_ERRORS = {
    2: "ERR_UNAVAILABLE", 4: "ERR_UNAUTHORIZED", 6: "ERR_OUT_OF_MEMORY", 18: "ERR_FILE_EOF",
    30: "ERR_INVALID_DATA", 31: "ERR_INVALID_PARAMETER",
}
ERR_UNAUTHORIZED = 4
ERR_OUT_OF_MEMORY = 6
ERR_FILE_EOF = 18
ERR_INVALID_DATA = 30


class DecodeError(ValueError):
    """Bytes the engine would reject (or that go past our own limits).

    ``offset`` is the byte offset of the problem, ``path`` where in the value it was
    (``[2]["pos"]``), ``reason`` what is wrong and ``code`` the Godot ``Error`` the engine
    returns for it.
    """

    def __init__(self, offset: int, reason: str, path: str = "", code: int = ERR_INVALID_DATA) -> None:
        self.offset = offset
        self.reason = reason
        self.path = path
        self.code = code
        where = f" at {path}" if path else ""
        super().__init__(f"offset {offset}{where}: {reason} ({GODOT_ERRORS.get(code, code)})")


class EncodeError(ValueError):
    """A value that cannot be written in the chosen dialect."""
