"""Godot 4.x: a native binary ($GODOT4, headless) or the official web export template under Node.js.

Both run the same driver as the script of the main scene: the web template does not run
``--script``, so the main-scene route is the one that works everywhere.
"""

from __future__ import annotations

from pathlib import Path

from .pck import build_pck, default_settings, project_binary
from .runner import HERE, Engine, driver_source

MAIN_SCENE = """\
[gd_scene load_steps=2 format=3]

[ext_resource type="Script" path="res://probe.gd" id="1"]

[node name="Probe" type="Node"]
script = ExtResource("1")
"""

PROJECT_GODOT = """\
config_version=5

[application]
config/name="godot-dissect-oracle"
run/main_scene="res://main.tscn"
boot_splash/show_image=false

[audio]
driver/driver="Dummy"

[logging]
file_logging/enable_file_logging=false
"""


class Godot4WebEngine(Engine):
    """The wasm web template (Godot 4.6, single precision, release build) under plain Node.js."""

    name = "godot4"
    base_class = "RefCounted"
    startup_seconds = 30.0

    def __init__(self, node: str, engine_dir: Path) -> None:
        super().__init__()
        self.node = node
        self.engine_dir = engine_dir

    def _command(self, workdir: Path, cases: bytes, timeout: float) -> list[str]:
        files = [
            ("project.binary", project_binary(default_settings("res://main.tscn"))),
            ("main.tscn", MAIN_SCENE.encode()),
            ("probe.gd", driver_source("probe4.gd").encode()),
            ("cases.bin", cases),
        ]
        pck = workdir / "oracle.pck"
        pck.write_bytes(build_pck(files))
        # Node's own timer is only a backstop (5 s later): the caller's timeout kills it first.
        node_timeout_ms = str(int(timeout * 1000) + 5000)
        return [self.node, str(HERE / "run_web.js"), str(self.engine_dir), str(pck), node_timeout_ms]


class Godot4NativeEngine(Engine):
    """A native Godot 4 binary given by $GODOT4 (untested here: no such binary on the dev machines)."""

    name = "godot4"
    base_class = "RefCounted"

    def __init__(self, binary: str) -> None:
        super().__init__()
        self.binary = binary

    def _command(self, workdir: Path, cases: bytes, timeout: float) -> list[str]:
        (workdir / "project.godot").write_text(PROJECT_GODOT, encoding="utf-8")
        (workdir / "main.tscn").write_text(MAIN_SCENE, encoding="utf-8")
        (workdir / "probe.gd").write_text(driver_source("probe4.gd"), encoding="utf-8")
        (workdir / "cases.bin").write_bytes(cases)
        return [self.binary, "--headless", "--path", str(workdir)]
