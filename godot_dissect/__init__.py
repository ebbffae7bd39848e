"""godot-dissect: Godot Engine network traffic made visible and testable."""

from .codec import decode, decode_prefix, encode
from .errors import DecodeError, EncodeError
from .spec import DIALECT_NAMES, get_dialect
from .text import TextParseError, from_text, to_text

__version__ = "0.1.0"

__all__ = [
    "DIALECT_NAMES", "DecodeError", "EncodeError", "TextParseError", "decode", "decode_prefix", "encode",
    "from_text", "get_dialect", "to_text",
]
