"""Hostile review of the generated Wireshark plugin (lua/godot.lua): hand-built captures through real tshark
with the plugin, in the packet list, -V, two passes and the statistics; the plugin's own work counted in Lua
VM instructions (deterministic: linear work doubles with the input), its values against the Python reader's."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from godot_dissect.fuzz.harness import lua_script

from .test_hostile import VM_COUNTER
from .test_hostile_analysis import _godot4_enet, _inline_path_calls

pytestmark = pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")

#: the plugin's Lua work at 2x the hostile part of the input, at most this times that at 1x (linear work: ~2)
VM_SCALE_RATIO = 2.3


def _vm_steps(path: Path, tmp_path: Path, *args: str) -> int:
    """The plugin's Lua VM instructions (in thousands) over ``path`` with ``-V`` and ``args``; fails on a
    Lua error."""
    counter = tmp_path / "vm_counter.lua"
    counter.write_text(VM_COUNTER)
    r = subprocess.run(["tshark", "-n", "-X", f"lua_script:{lua_script()}", "-X", f"lua_script:{counter}",
                        "-r", str(path), "-V", *args], capture_output=True, text=True, errors="replace", timeout=600)
    assert r.returncode == 0 and "Lua Error" not in r.stdout and "Lua Error" not in r.stderr, r.stderr[-500:]
    steps = [int(line.split()[1]) for line in r.stderr.splitlines() if line.startswith("vm-steps ")]
    assert len(steps) == 1, r.stderr[-300:]
    return steps[0]


def _scales(build, sizes: tuple[int, int], tmp_path: Path, *args: str) -> None:  # noqa: ANN001
    small, large = sizes
    steps = []
    for n in sizes:
        build(tmp_path / f"c{n}.pcap", n)
        steps.append(_vm_steps(tmp_path / f"c{n}.pcap", tmp_path, *args))
    assert steps[0] > 100, f"the plugin ran {steps[0]}k VM instructions: was it counted?"
    assert steps[1] <= VM_SCALE_RATIO * steps[0] * large / (2 * small), \
        f"{large / small:.0f}x the input took {steps[1] / steps[0]:.2f}x the Lua VM instructions ({steps})"


def test_inline_path_calls_are_linear_in_the_plugin(tmp_path: Path) -> None:
    """A Godot 4 REMOTE_CALL naming its node by an inline path looked for the path's md5 by scanning the
    sender's whole path cache (multiplayer.lua resolve(): ``for id, path in pairs(st.paths[sender])``), so n
    SIMPLIFY_PATHs then n inline calls cost n^2 (2000 -> 4000 -> 8000: 18 M, 61 M, 218 M VM instructions).
    The Python reader keeps path -> md5 of the latest announcement (session.py path_md5s)."""
    _scales(_inline_path_calls, (2000, 4000), tmp_path)


def test_inline_path_call_gets_the_md5_of_the_latest_announcement_in_the_plugin(tmp_path: Path) -> None:
    """The same path announced twice (cache ids 5 then 1, md5s of different method lists), then a call naming
    it inline: the engine's receiver holds the latest announcement's md5 (the Python reader: path_md5s), so
    ``rpc_names`` names the method; the plugin's scan of the cache took whichever id ``pairs`` met last (5)."""
    from godot_dissect.multiplayer import godot4 as g4
    from godot_dissect.multiplayer import rpc_md5
    from godot_dissect.pcap.reader import read_pcap

    from .test_lua import tshark

    pcap = tmp_path / "md5.pcap"
    _godot4_enet(pcap, [g4.build_simplify_path("f" * 32, 5, "/root/Main"),
                        g4.build_simplify_path(rpc_md5(["chat", "move"]), 1, "/root/Main"),
                        g4.build_rpc(1, [], node_path="/root/Main")])
    names = {"/root/Main": ["chat", "move"]}
    (expected,) = [r.method for r in read_pcap(str(pcap), rpc_names=names) if getattr(r, "kind", None) == "rpc"]
    assert expected == "move"
    out = tshark(pcap, "-o", "godot_mp.rpc_names:/root/Main=chat,move", "-T", "fields", "-e", "godot_mp.rpc.method",
                 "-Y", 'godot_mp.kind == "rpc"')
    assert out.split() == [expected]
