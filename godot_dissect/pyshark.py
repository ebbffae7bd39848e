"""pyshark with the generated Godot dissector loaded.

    from godot_dissect import pyshark as gp
    with gp.open("capture.pcapng", dialect="godot3", udp_ports="4242") as cap:
        for pkt in cap:
            if "godot" in pkt:
                print(pkt.godot.dialect, pkt.godot.get_field("debugger.message"))

``open`` returns a ``pyshark.FileCapture`` that runs tshark with ``-X lua_script:`` pointing at the
dissector (the committed ``lua/godot.lua`` when it is current, else a copy generated from the spec).
Keyword arguments named after the dissector's preferences (``dialect``, ``udp_ports``, ``tcp_ports``,
``debugger_ports``, ``heuristics``, ``packed_limit``, ``max_depth``, ``details``, ``compact``) become
``-o godot.NAME:VALUE``; every other keyword argument goes to ``FileCapture`` (``display_filter``,
``decode_as``, ``override_prefs``, ``use_json``, ...). JSON output is the default because it keeps
the Variant tree's nesting (pyshark's XML mode flattens Lua subtrees).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

#: the dissector's preferences (``-o godot.NAME:VALUE``)
PREFS = ("dialect", "udp_ports", "tcp_ports", "debugger_ports", "heuristics", "packed_limit", "max_depth",
         "details", "compact")

_generated: Path | None = None


def script_path() -> Path:
    """A godot.lua generated from the spec in use: the committed file when it is current."""
    global _generated
    from .lua.generator import COMMITTED, generate

    text = generate()
    try:
        if COMMITTED.read_text(encoding="utf-8") == text:
            return COMMITTED
    except OSError:
        pass
    if _generated is None or not _generated.exists() or _generated.read_text(encoding="utf-8") != text:
        out = Path(tempfile.mkdtemp(prefix="godot-dissect-lua-")) / "godot.lua"
        out.write_text(text, encoding="utf-8")
        _generated = out
    return _generated


def _pref_value(v: Any) -> str:
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, (list, tuple, set)):
        return ",".join(str(x) for x in v)
    return str(v)


def open(path: str | Path, **kw: Any) -> Any:  # noqa: A001 - the module's API is godot_dissect.pyshark.open
    """A ``pyshark.FileCapture`` of ``path`` with the Godot dissector loaded and its prefs set."""
    import pyshark

    prefs = dict(kw.pop("override_prefs", None) or {})
    for name in PREFS:
        if name in kw:
            prefs[f"godot.{name}"] = _pref_value(kw.pop(name))
    params = list(kw.pop("custom_parameters", None) or [])
    params = ["-X", f"lua_script:{script_path()}", *params]
    kw.setdefault("use_json", True)
    return pyshark.FileCapture(str(path), override_prefs=prefs or None, custom_parameters=params, **kw)
