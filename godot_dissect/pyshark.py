"""pyshark with the generated Godot dissectors loaded.

    from godot_dissect import pyshark as gp
    with gp.open("captures/godot3-enet-multiplayer.pcapng", display_filter="godot_mp.kind == rpc") as cap:
        for pkt in cap:
            for mp in pkt.get_multiple_layers("godot_mp"):
                print(mp.get_field("rpc.node"), mp.get_field("rpc.method"), mp.get_field("rpc.arg"))

``open`` returns a ``pyshark.FileCapture``. Each protocol of the plugin is a layer of its own:
``godot`` (Variants and their framing, the remote debugger), ``godot_mp`` (Godot 3 MultiplayerAPI /
Godot 4 SceneMultiplayer, with the Godot 3 ENet peer header) and ``enet``.

Which copy of the dissector tshark runs: the installed one (``godot-dissect lua --install``) when it
is the one this godot-dissect generates; otherwise ``-X lua_script:`` with the committed
``lua/godot.lua`` (or a copy generated from the spec), never both. When an installed copy is out of
date, tshark runs with ``HOME`` set to an empty folder, because Wireshark loads the plugin folder
first and the dissector steps aside when it is loaded a second time.

Keyword arguments named after the dissectors' preferences become ``-o PROTO.NAME:VALUE``: the
``godot`` ones by name (``dialect``, ``udp_ports``, ``tcp_ports``, ``debugger_ports``, ``heuristics``,
``packed_limit``, ``max_depth``, ``details``, ``compact``), ``godot_mp``'s ``rpc_names`` (a string in
the preference's syntax, or the ``{node: {"script": [...], "node": [...]}}`` mapping ``read_pcap``
takes), and the ``enet`` ones with an ``enet_`` prefix (``enet_udp_ports``, ``enet_heuristic``,
``enet_compression``, ``enet_godot_major``, ``enet_max_reassembly``). The list is read from the
generated Lua, so a preference added there is a keyword here. Every other keyword argument goes to
``FileCapture`` (``display_filter``, ``decode_as``, ``override_prefs``, ``use_json``, ...). JSON
output is the default because it keeps the Variant tree's nesting (pyshark's XML mode flattens Lua
subtrees). The hidden helper item Wireshark's Lua adds before each Lua dissector (``_ws.lua.fake``)
is not a layer of the packets this returns, and a frame with several messages has a layer for each
(``pkt.get_multiple_layers("godot_mp")``), where plain pyshark would hide all but the first in
``duplicate_layers``.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: the protocols of the plugin whose preferences are keywords, with the keyword prefix of each
PREF_PROTOCOLS = {"godot": "", "godot_mp": "", "enet": "enet_"}
#: layers that are not protocols (Wireshark's Lua helper item)
HIDDEN_LAYERS = frozenset({"_ws.lua.fake"})

_generated: Path | None = None
_empty_home: Path | None = None


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


def installed_state() -> str:
    """"current", "stale" or "absent": the personal plugin copy against what the spec generates."""
    from .cli.lua_cmds import plugin_dir
    from .lua.generator import generate

    try:
        text = (plugin_dir() / "godot.lua").read_text(encoding="utf-8")
    except FileNotFoundError:
        return "absent"
    except OSError:
        return "stale"
    return "current" if text == generate() else "stale"


def preferences() -> dict[str, str]:
    """keyword -> ``PROTO.NAME``, from the ``PROTO.prefs.NAME = Pref.`` lines of the generated Lua."""
    from .lua.generator import generate

    out = {}
    for proto, name in re.findall(r"\b(\w+)\.prefs\.(\w+)\s*=\s*Pref\.", generate()):
        if proto in PREF_PROTOCOLS:
            out[PREF_PROTOCOLS[proto] + name] = f"{proto}.{name}"
    return out


def _rpc_names(v: Any) -> str:
    if isinstance(v, str):
        return v
    return ";".join(f"{node}=" + ",".join([*t.get("script", ()), *(f"node:{n}" for n in t.get("node", ()))])
                    for node, t in v.items())


def _pref_value(key: str, v: Any) -> str:
    if key == "rpc_names" and isinstance(v, Mapping):
        return _rpc_names(v)
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, (list, tuple, set)):
        return ",".join(str(x) for x in v)
    return str(v)


def _capture_class() -> type:
    import pyshark

    class _Layers:
        """The JSON parser of pyshark, with Wireshark's Lua helper item left out of the layers."""

        def __init__(self, inner: Any) -> None:
            self._inner = inner

        async def get_packets_from_stream(self, stream: Any, existing_data: bytes,
                                          got_first_packet: bool = True) -> Any:
            packet, data = await self._inner.get_packets_from_stream(stream, existing_data,
                                                                     got_first_packet=got_first_packet)
            if packet is not None:
                # a frame with several messages has several items of a protocol: pyshark keeps the
                # later ones in the first layer's duplicate_layers; here each is a layer of the packet
                layers = []
                for x in packet.layers:
                    if x.layer_name.lower() in HIDDEN_LAYERS:
                        continue
                    more = getattr(x, "duplicate_layers", None) or []
                    if more:
                        x.duplicate_layers = []
                    layers += [x, *more]
                packet.layers = layers
            return packet, data

    class GodotCapture(pyshark.FileCapture):  # type: ignore[misc, name-defined]
        """A FileCapture running tshark with the Godot dissectors (see the module's text)."""

        home: str | None = None

        def _setup_tshark_output_parser(self) -> Any:
            return _Layers(super()._setup_tshark_output_parser())

        async def _get_tshark_process(self, packet_count: int | None = None, stdin: Any = None) -> Any:
            if self.home is None:
                return await super()._get_tshark_process(packet_count=packet_count, stdin=stdin)
            old = os.environ.get("HOME")
            os.environ["HOME"] = self.home  # read once, when the process is created
            try:
                return await super()._get_tshark_process(packet_count=packet_count, stdin=stdin)
            finally:
                if old is None:
                    os.environ.pop("HOME", None)
                else:
                    os.environ["HOME"] = old

    return GodotCapture


def open(path: str | Path, **kw: Any) -> Any:  # noqa: A001 - the module's API is godot_dissect.pyshark.open
    """A ``pyshark.FileCapture`` of ``path`` with the Godot dissectors loaded and their prefs set."""
    global _empty_home
    prefs = dict(kw.pop("override_prefs", None) or {})
    for key, pref in preferences().items():
        if key in kw:
            prefs[pref] = _pref_value(pref.split(".", 1)[1], kw.pop(key))
    params = list(kw.pop("custom_parameters", None) or [])
    state = installed_state()
    if state != "current":
        params = ["-X", f"lua_script:{script_path()}", *params]
    kw.setdefault("use_json", True)
    cap = _capture_class()(str(path), override_prefs=prefs or None, custom_parameters=params, **kw)
    if state == "stale":
        if _empty_home is None:
            _empty_home = Path(tempfile.mkdtemp(prefix="godot-dissect-home-"))
        cap.home = str(_empty_home)
    return cap
