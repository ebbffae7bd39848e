"""The Wireshark Lua dissector: generator (``generate``) and its Lua engine template (``engine.lua``)."""

from .generator import COMMITTED, generate, spec_data

__all__ = ["COMMITTED", "generate", "spec_data"]
