"""What ``godot-dissect read`` loads at start-up (its speed is measured in benchmarks/bench_read.py):
each subcommand registers through its own module only (``cli.COMMANDS``), and reading a plain capture
loads neither the display filter's parser, nor the ENet/multiplayer layers, nor other subcommands."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import dpkt

from godot_dissect import cli

ROOT = Path(__file__).resolve().parent.parent


def test_commands_name_the_module_that_registers_them() -> None:
    for module in dict.fromkeys(cli.COMMANDS.values()):
        sub = argparse.ArgumentParser().add_subparsers()
        cli.command_module(module).register(sub)
        assert sorted(sub.choices) == sorted(c for c, m in cli.COMMANDS.items() if m == module), module
    assert list(cli.build_parser()._subparsers._group_actions[0].choices) == list(cli.COMMANDS)  # type: ignore[union-attr]


def _modules_after_read(capture: Path, *options: str) -> set[str]:
    code = ("import sys, json, runpy; sys.argv = ['godot_dissect', 'read', *sys.argv[1:]]\n"
            "try:\n    runpy.run_module('godot_dissect', run_name='__main__')\n"
            "except SystemExit:\n    pass\n"
            "print(json.dumps(sorted(sys.modules)), file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code, str(capture), *options], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
    return set(json.loads(out.stderr.strip().splitlines()[-1]))


def test_reading_a_plain_capture_loads_only_what_it_needs(tmp_path: Path) -> None:
    empty = tmp_path / "empty.pcap"
    with open(empty, "wb") as f:
        dpkt.pcap.Writer(f, linktype=dpkt.pcap.DLT_EN10MB)
    loaded = _modules_after_read(empty)
    for absent in ("lark", "godot_dissect.cli.filter", "godot_dissect.cli.dataset_cmds", "godot_dissect.cli.fuzz_cmds",
                   "godot_dissect.cli.lua_cmds", "godot_dissect.enet", "godot_dissect.multiplayer",
                   "godot_dissect.spec.multiplayer", "godot_dissect.spec.enet", "godot_dissect.dataset", "ctypes"):
        assert absent not in loaded, absent
    # and what an option or a capture asks for is loaded then: -Y the filter, an ENet capture the ENet layer
    assert "godot_dissect.cli.filter" in _modules_after_read(empty, "-Y", "kind == rpc")
    enet = ROOT / "captures" / "godot3-enet-multiplayer.pcapng"
    assert {"godot_dissect.enet", "godot_dissect.multiplayer"} <= _modules_after_read(enet)


def test_the_program_freezes_its_start_up_objects_and_a_caller_keeps_its_collector(tmp_path: Path) -> None:
    empty = tmp_path / "empty.pcap"
    with open(empty, "wb") as f:
        dpkt.pcap.Writer(f, linktype=dpkt.pcap.DLT_EN10MB)
    code = ("import gc, sys, runpy; path = sys.argv[1]; sys.argv = ['godot_dissect', 'read', path]\n"
            "try:\n    runpy.run_module('godot_dissect', run_name='__main__')\n"
            "except SystemExit:\n    pass\n"
            "print(gc.isenabled(), gc.get_freeze_count() > 10000, file=sys.stderr)\n"
            "gc.unfreeze()\n"
            "from godot_dissect.cli import main\n"
            "assert main(['read', path]) == 0\n"
            "print(gc.isenabled(), gc.get_freeze_count(), file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code, str(empty)], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
    assert out.stderr.split() == ["True", "True", "True", "0"]
