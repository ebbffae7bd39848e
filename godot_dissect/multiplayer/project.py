"""What a Godot 4 project folder says about RPC names: each script's ``@rpc`` methods and which
script each node path has (main scenes, instanced scenes, autoloads).

Only the project's text files are read (``.gd``, ``.tscn``, ``project.godot``); nothing is run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..tscn import Scene, TextParseError, load
from ..values import ResourceRef

#: directories of a project that hold no sources
_SKIP_DIRS = {".godot", ".import", ".git", "addons/.git"}
#: nesting limit for instanced scenes and script inheritance (a cycle is a broken project)
_MAX_DEPTH = 16

_RPC = re.compile(r"@rpc\b")
_FUNC = re.compile(r"(?:static\s+)?func\s+([A-Za-z_]\w*)")
_EXTENDS = re.compile(r'^extends\s+(?:"([^"]+)"|\'([^\']+)\'|([A-Za-z_][\w.]*))', re.M)
_CLASS_NAME = re.compile(r"^class_name\s+([A-Za-z_]\w*)", re.M)
#: ``rpc_config("name", {...})`` in a script: a node-level RPC config (ids with bit 15)
_RPC_CONFIG = re.compile(r"""\brpc_config\(\s*&?["']([^"']+)["']""")
_AUTOLOAD = re.compile(r'^\s*([A-Za-z_]\w*)\s*=\s*"\*?(res://[^"]+)"', re.M)


def rpc_methods(source: str) -> list[str]:
    """Names of the functions annotated ``@rpc`` (the annotation's arguments may span lines, other
    annotations may stand between it and ``func``)."""
    names = []
    text = _strip_comments(source)
    for m in _RPC.finditer(text):
        pos = _skip_args(text, m.end())
        # other annotations and blank space before the func
        while True:
            rest = text[pos:]
            stripped = rest.lstrip()
            pos += len(rest) - len(stripped)
            if stripped.startswith("@"):
                am = re.match(r"@\w+", stripped)
                pos = _skip_args(text, pos + am.end()) if am else pos + 1
                continue
            break
        fm = _FUNC.match(text, pos)
        if fm:
            names.append(fm.group(1))
    return names


def _skip_args(text: str, pos: int) -> int:
    """Past a parenthesised argument list starting at ``pos`` (after blanks), if there is one."""
    p = pos
    while p < len(text) and text[p] in " \t":
        p += 1
    if p >= len(text) or text[p] != "(":
        return pos
    depth, quote = 0, ""
    while p < len(text):
        c = text[p]
        if quote:
            if c == "\\":
                p += 1
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return p + 1
        p += 1
    return p


def _strip_comments(source: str) -> str:
    out = []
    for line in source.splitlines():
        quote = ""
        for i, c in enumerate(line):
            if quote:
                if c == quote:
                    quote = ""
            elif c in "\"'":
                quote = c
            elif c == "#":
                line = line[:i]
                break
        out.append(line)
    return "\n".join(out)


def node_rpc_configs(source: str) -> list[str]:
    """Method names the script configures on its node with ``rpc_config("name", ...)``."""
    return list(dict.fromkeys(_RPC_CONFIG.findall(_strip_comments(source))))


@dataclass
class ScriptInfo:
    path: str  # res:// path
    rpc_names: list[str]  # this script's own @rpc methods
    node_rpc_names: list[str] = field(default_factory=list)  # rpc_config() calls: node-level names
    base: str | None = None  # res:// path of the script it extends, when that is a project script
    class_name: str | None = None


@dataclass
class Project:
    """RPC-relevant facts of one project folder."""

    root: Path
    scripts: dict[str, ScriptInfo] = field(default_factory=dict)  # res:// path -> info
    node_scripts: dict[str, str] = field(default_factory=dict)  # node path (scene-relative, root name first) -> res://
    problems: list[str] = field(default_factory=list)

    def script_rpc_names(self, res_path: str) -> list[str] | None:
        """A script's @rpc names with the ones it inherits (what GDScript's rpc config holds)."""
        both = self.rpc_names(res_path)
        return None if both is None else both[0]

    def rpc_names(self, res_path: str) -> tuple[list[str], list[str]] | None:
        """(script @rpc names, node-level rpc_config names) of a script, inherited ones included."""
        names: list[str] = []
        node: list[str] = []
        seen: set[str] = set()
        cur: str | None = res_path
        while cur is not None and cur not in seen and len(seen) < _MAX_DEPTH:
            seen.add(cur)
            info = self.scripts.get(cur)
            if info is None:
                return None if cur == res_path else (names, node)
            names += [n for n in info.rpc_names if n not in names]
            node += [n for n in info.node_rpc_names if n not in node]
            cur = info.base
        return names, node

    def script_for(self, node_path: str) -> str | None:
        """The script the node at ``node_path`` (relative to the multiplayer root) has: an exact
        scene path, else the longest scene path the node path ends with."""
        p = node_path.strip("/")
        if p.startswith("root/"):
            p = p[len("root/"):]
        if p in self.node_scripts:
            return self.node_scripts[p]
        # the scene instanced under runtime nodes, or the multiplayer root below the scene's root
        best = None
        for scene_path, script in self.node_scripts.items():
            if (p.endswith("/" + scene_path) or scene_path.endswith("/" + p)) and (
                    best is None or len(scene_path) > len(best[0])):
                best = (scene_path, script)
        return best[1] if best else None

    def all_rpc_lists(self) -> dict[str, tuple[list[str], list[str]]]:
        """Every project script that has RPC methods: res:// path -> (script names, node-level names)."""
        out = {}
        for path in self.scripts:
            both = self.rpc_names(path)
            if both and (both[0] or both[1]):
                out[path] = both
        return out


def load_project(directory: str | Path) -> Project:
    root = Path(directory)
    if not root.is_dir():
        raise FileNotFoundError(f"{directory}: not a directory")
    proj = Project(root)
    files = sorted(p for p in root.rglob("*") if p.is_file() and not set(p.relative_to(root).parts[:-1]) & _SKIP_DIRS)
    classes: dict[str, str] = {}
    extends_raw: dict[str, str] = {}
    for p in files:
        if p.suffix == ".gd":
            res = _res(root, p)
            try:
                src = p.read_text(encoding="utf-8", errors="replace")
            except OSError as e:
                proj.problems.append(f"{res}: {e}")
                continue
            info = ScriptInfo(res, rpc_methods(src), node_rpc_configs(src))
            cm = _CLASS_NAME.search(src)
            if cm:
                info.class_name = cm.group(1)
                classes[cm.group(1)] = res
            em = _EXTENDS.search(src)
            if em:
                extends_raw[res] = em.group(1) or em.group(2) or em.group(3)
            proj.scripts[res] = info
    for res, target in extends_raw.items():
        base = target if target.startswith("res://") else classes.get(target)
        if base is None and target.endswith(".gd"):
            base = _join_res(res, target)
        proj.scripts[res].base = base if base in proj.scripts else None
    scenes: dict[str, Scene] = {}
    for p in files:
        if p.suffix in (".tscn", ".escn"):
            try:
                s = load(p)
            except (TextParseError, OSError, ValueError) as e:
                proj.problems.append(f"{_res(root, p)}: {e}")
                continue
            if isinstance(s, Scene):
                scenes[_res(root, p)] = s
    for res, scene in scenes.items():
        for path, script in _scene_scripts(scene, res, scenes, 0):
            proj.node_scripts.setdefault(path, script)
    godot = root / "project.godot"
    if godot.is_file():
        text = godot.read_text(encoding="utf-8", errors="replace")
        section = re.search(r"^\[autoload\](.*?)(?=^\[|\Z)", text, re.M | re.S)
        for name, target in _AUTOLOAD.findall(section.group(1) if section else ""):
            if target.endswith(".gd"):
                proj.node_scripts.setdefault(name, target)
            elif target in scenes:
                for path, script in _scene_scripts(scenes[target], target, scenes, 0):
                    rest = path.split("/", 1)
                    proj.node_scripts.setdefault("/".join([name, *rest[1:]]), script)
    return proj


def _res(root: Path, p: Path) -> str:
    return "res://" + p.relative_to(root).as_posix()


def _join_res(base_res: str, rel: str) -> str:
    folder = base_res.rsplit("/", 1)[0]
    return f"{folder}/{rel}"


def _scene_scripts(scene: Scene, res: str, scenes: dict[str, Scene], depth: int) -> list[tuple[str, str]]:
    """(node path with the scene root's name first, script res:// path) for every scripted node,
    instanced scenes included."""
    if depth > _MAX_DEPTH or not scene.nodes:
        return []
    ext = scene.ext_resources
    root_name = str(scene.nodes[0].attrs.get("name", ""))
    out: list[tuple[str, str]] = []
    for node in scene.nodes:
        rel = scene.node_path(node)
        path = root_name if rel == "." else f"{root_name}/{rel}"
        script = node.properties.get("script")
        if isinstance(script, ResourceRef) and script.kind == "ExtResource":
            sec = ext.get(script.id)
            if sec is not None and str(sec.attrs.get("path", "")).endswith(".gd"):
                out.append((path, str(sec.attrs["path"])))
        inst = node.attrs.get("instance")
        if isinstance(inst, ResourceRef) and inst.kind == "ExtResource":
            sec = ext.get(inst.id)
            sub = scenes.get(str(sec.attrs.get("path", ""))) if sec is not None else None
            if sub is not None:
                for sub_path, sub_script in _scene_scripts(sub, res, scenes, depth + 1):
                    rest = sub_path.split("/", 1)
                    out.append(("/".join([path, *rest[1:]]), sub_script))
    return out
