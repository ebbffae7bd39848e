"""Godot 3.x, native headless (Debian's godot3-server 3.2.3), running a SceneTree script."""

from __future__ import annotations

from pathlib import Path

from .runner import Engine, driver_source

PROJECT_GODOT = """\
config_version=4

[application]
config/name="godot-dissect-oracle"

[logging]
file_logging/enable_file_logging=false
"""


class Godot3Engine(Engine):
    name = "godot3"
    base_class = "Reference"

    def __init__(self, binary: str) -> None:
        super().__init__()
        self.binary = binary

    def _command(self, workdir: Path, cases: bytes, timeout: float) -> list[str]:
        (workdir / "project.godot").write_text(PROJECT_GODOT, encoding="utf-8")
        (workdir / "probe.gd").write_text(driver_source("probe3.gd"), encoding="utf-8")
        (workdir / "cases.bin").write_bytes(cases)
        return [self.binary, "--path", str(workdir), "-s", "res://probe.gd"]
