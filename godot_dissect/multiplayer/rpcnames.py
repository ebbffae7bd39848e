"""Godot 4 RPC method ids back to names, never guessed silently.

A method id is an index into the node's RPC names sorted (``SceneRPCInterface::_parse_rpc_config``):
node-level names (``rpc_config``, C++) get ids with bit 15 set, the script's ``@rpc`` names plain
ids. The names are not on the wire, but SIMPLIFY_PATH carries ``get_rpc_md5``: the md5 of all the
names concatenated (node-level sorted, then script sorted). A candidate list of names (given by the
user, or read from a project folder) is used only when its md5 equals the one the sender announced;
with no md5 in the capture the name is marked unverified.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..spec.multiplayer import MAX_CACHE_ENTRIES, NODE_RPC_FLAG
from .project import Project, load_project

VERIFIED = "verified"  # the candidate names' md5 is the one the sender announced
UNVERIFIED = "unverified"  # no SIMPLIFY_PATH md5 for this node in the capture
MISMATCH = "mismatch"  # names known, but their md5 is not the announced one: not shown


@dataclass(frozen=True)
class RpcTable:
    """One node's RPC names as the engine numbers them."""

    script: tuple[str, ...] = ()
    node: tuple[str, ...] = ()
    source: str = ""

    @property
    def ids(self) -> dict[int, str]:
        out = {i | NODE_RPC_FLAG: n for i, n in enumerate(sorted(self.node))}
        out.update(enumerate(sorted(self.script)))
        return out

    @property
    def md5(self) -> str:
        return rpc_md5(self.script, self.node)


def rpc_md5(script_names: Sequence[str], node_names: Sequence[str] = ()) -> str:
    """``SceneRPCInterface::get_rpc_md5``: md5_text of node-level names then script names, each sorted."""
    return hashlib.md5(("".join(sorted(node_names)) + "".join(sorted(script_names))).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Resolution:
    name: str | None
    status: str  # VERIFIED / UNVERIFIED / MISMATCH / "" (nothing known)
    source: str = ""


@dataclass
class RpcNames:
    """Candidate RPC names per node path: ``by_path`` ({path: [script names]} or {path: {"script":
    [...], "node": [...]}}) and/or a project folder."""

    by_path: Mapping[str, Sequence[str] | Mapping[str, Sequence[str]]] = field(default_factory=dict)
    project: Project | None = None
    _tables: dict[str, list[RpcTable]] = field(default_factory=dict, repr=False)
    _by_md5: dict[str, RpcTable | None] | None = field(default=None, repr=False)
    _named: dict[str, list[RpcTable]] | None = field(default=None, repr=False)  # by_path by normalised path

    @classmethod
    def build(cls, rpc_names: Mapping | None = None, project: str | Path | Project | None = None) -> RpcNames:
        proj = load_project(project) if isinstance(project, (str, Path)) else project
        return cls(dict(rpc_names or {}), proj)

    def candidates(self, node_path: str) -> list[RpcTable]:
        key = _norm(node_path)
        if key in self._tables:
            return self._tables[key]
        if self._named is None:  # once, not a scan of by_path per node path of the capture
            named: dict[str, list[RpcTable]] = {}
            for path, names in self.by_path.items():
                if isinstance(names, Mapping):
                    t = RpcTable(tuple(names.get("script", ())), tuple(names.get("node", ())), "rpc_names")
                else:
                    t = RpcTable(tuple(names), (), "rpc_names")
                named.setdefault(_norm(path), []).append(t)
            self._named = named
        out = list(self._named.get(key, ()))
        if self.project is not None:
            script = self.project.script_for(key)
            both = self.project.rpc_names(script) if script else None
            if both is not None:
                out.append(RpcTable(tuple(both[0]), tuple(both[1]), f"{script} (scene)"))
        if len(self._tables) < MAX_CACHE_ENTRIES:  # a capture of ever new node paths: computed again
            self._tables[key] = out
        return out

    def by_md5(self, md5: str) -> RpcTable | None:
        """A project script whose RPC names have this md5."""
        if self.project is None:
            return None
        if self._by_md5 is None:
            index: dict[str, RpcTable | None] = {}
            for path, (names, node) in self.project.all_rpc_lists().items():
                t = RpcTable(tuple(names), tuple(node), f"{path} (md5)")
                index.setdefault(t.md5, t)  # equal md5: equal names
            self._by_md5 = index
        return self._by_md5.get(md5)

    def table(self, node_path: str | None, md5: str | None) -> tuple[RpcTable | None, str]:
        cands = self.candidates(node_path) if node_path else []
        if md5:
            for t in cands:
                if t.md5 == md5:
                    return t, VERIFIED
            t = self.by_md5(md5)
            if t is not None:
                return t, VERIFIED
            return None, MISMATCH if cands else ""
        return (cands[0], UNVERIFIED) if cands else (None, "")

    def resolve(self, node_path: str | None, method_id: int, md5: str | None) -> Resolution:
        t, status = self.table(node_path, md5)
        if t is None:
            return Resolution(None, status)
        name = t.ids.get(method_id)
        if name is None:
            return Resolution(None, MISMATCH if status == VERIFIED else status, t.source)
        return Resolution(name, status, t.source)


def _norm(path: str) -> str:
    p = path.strip("/")
    return p[len("root/"):] if p.startswith("root/") else p
