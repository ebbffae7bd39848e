"""Run GDScript on real Godot engines and collect what they say about Variant serialization.

    from godot_dissect.engines import get_engine, EncodeCase, DecodeCase
    eng = get_engine("godot3")            # or "godot4"; EngineUnavailable if it cannot run here
    res = eng.probe(encode=[EncodeCase("v2", "Vector2(1, 2)")],
                    decode=[DecodeCase(bytes.fromhex("0200000001000000"))])
    res.encoded["v2"].data, res.decoded[0].ok, res.decoded[0].error

One engine process per probe() (more only after a crash, see runner.py).  Install the engines with
ensure_installed(name) or scripts/install-engines.sh.

How results are obtained, and what to know (details in probe3.gd / probe4.gd):
- Decode errors: PacketPeer.get_packet_error() does NOT report decode errors in either engine
  (its get_var binding swallows them), so the driver prints a marker before each case and the error
  code is read from the decoder's own error message ("... Returning: ERR_FILE_EOF"; a few messages
  without a code are mapped in protocol.py).  ``error`` is None if a rejection printed neither.
- Accepted or rejected: Godot 3 -- bytes2var() raises a script error, which aborts the wrapper
  function; Godot 4 -- PackedByteArray.decode_var_size() is 0 on error.  Both are reliable.
- ``used`` (bytes consumed) exists only in Godot 4; Godot 3 reports None.
- With allow_objects, Godot 4 decodes twice (value, then size): objects are instantiated twice.
- Script runtime errors abort an encode case ("runtime") in Godot 3 (a debug-enabled build) and in
  native debug builds of Godot 4, but the web template is a release build: there a failing
  expression (bad index, missing method) silently evaluates to null and is reported as a value.
- Crashes (Godot 3.2.3 overflows its stack on deeply nested data) are pinned on the running case,
  which is reported with error "crash" / crashed=True, and the other cases are run again.
- The web engine prints about 10 MB/s: cases whose values are megabytes long take seconds.
"""

from __future__ import annotations

import os
import shutil

from .godot3 import Godot3Engine
from .godot4 import Godot4NativeEngine, Godot4WebEngine
from .install import (
    MIN_NODE_MAJOR,
    ensure_installed,
    find_godot3,
    find_node,
    node_major,
    web_engine_dir,
    web_engine_ready,
)
from .model import (
    ERROR_CODES,
    DecodeCase,
    DecodeResult,
    EncodeCase,
    EncodeResult,
    EngineCrashed,
    EngineUnavailable,
    ProbeResult,
)
from .runner import Engine

ENGINE_NAMES = ("godot3", "godot4")

__all__ = [
    "ENGINE_NAMES",
    "ERROR_CODES",
    "DecodeCase",
    "DecodeResult",
    "EncodeCase",
    "EncodeResult",
    "Engine",
    "EngineCrashed",
    "EngineUnavailable",
    "ProbeResult",
    "ensure_installed",
    "get_engine",
]


def get_engine(name: str, *, install: bool = False, check: bool = True) -> Engine:
    """Return engine ``name`` ("godot3" or "godot4").

    With ``install``, missing pieces are installed first (ensure_installed).  With ``check`` (the
    default) the engine is started once on no cases, which also fills in ``version``; any failure
    raises EngineUnavailable with the reason.
    """
    if name not in ENGINE_NAMES:
        raise ValueError(f"unknown engine {name!r} (expected one of {ENGINE_NAMES})")
    if install:
        ensure_installed(name)
    engine = _locate(name)
    if check:
        try:
            engine.probe(timeout=60)
        except EngineCrashed as e:
            raise EngineUnavailable(f"{name} does not run here: {e.reason}") from e
        except OSError as e:
            raise EngineUnavailable(f"{name} does not run here: {e}") from e
    return engine


def _locate(name: str) -> Engine:
    hint = f"run scripts/install-engines.sh or godot_dissect.engines.ensure_installed({name!r})"
    if name == "godot3":
        binary = find_godot3()
        if binary is None:
            raise EngineUnavailable(f"godot3-server not found (or $GODOT3 not executable); {hint}")
        return Godot3Engine(binary)
    native = os.environ.get("GODOT4")
    if native:
        path = shutil.which(native) or native
        if not os.access(path, os.X_OK):
            raise EngineUnavailable(f"$GODOT4={native} is not an executable file")
        return Godot4NativeEngine(path)
    node = find_node()
    if node is None:
        raise EngineUnavailable(f"Node.js not found (needed for the Godot 4 web engine); {hint}")
    if node_major(node) < MIN_NODE_MAJOR:
        raise EngineUnavailable(f"Node.js >= {MIN_NODE_MAJOR} needed for the Godot 4 web engine")
    if not web_engine_ready():
        raise EngineUnavailable(f"Godot 4 web engine files not in {web_engine_dir()}; {hint}")
    return Godot4WebEngine(node, web_engine_dir())
