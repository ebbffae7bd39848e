"""An offline network profiler: tables of who sent what to whom, at which cost, from a capture.

``profile(path, **read_pcap_options)`` reads a capture once and returns a :class:`Profile` whose
tables (``rpc``, ``sync``, ``bandwidth``, ``enet``, ``variants``, ``conversations``, ``expert``) are
pandas DataFrames; ``plot.bandwidth_png`` draws bandwidth over time. The same tables back
``godot-dissect stats``.
"""

from .profile import BY, DEFAULT_TABLES, TABLES, Profile, profile

__all__ = ["BY", "DEFAULT_TABLES", "TABLES", "Profile", "profile"]
