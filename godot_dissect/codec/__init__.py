"""Binary Variant codec compiled from the spec."""

from .decoder import decode, decode_prefix
from .encoder import encode

__all__ = ["decode", "decode_prefix", "encode"]
