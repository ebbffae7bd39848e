"""Godot's text notation of values: ``var2str`` (Godot 3) / ``var_to_str`` (Godot 4) and the values
in .tscn/.tres files.

    to_text(Vector2(1, 2), "godot3")  -> 'Vector2( 1, 2 )'
    from_text('Vector2(1, 2)')        -> Vector2(x=1.0, y=2.0)
"""

from __future__ import annotations

from typing import Any

from .writer import to_text

__all__ = ["Reader", "TextParseError", "from_text", "to_text"]


def __getattr__(name: str) -> Any:
    # the parser loads when first asked for (``read`` writes text, never parses it: start-up time)
    if name in ("Reader", "TextParseError", "from_text"):
        from . import parser

        return getattr(parser, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
