"""Read Godot's text scenes and resources (.tscn, .tres, .escn) of Godot 3 and 4.

A file is a list of sections: ``[tag key=value ...]`` followed by ``key = value`` lines, read the way
``ResourceFormatLoaderText`` does (a key is everything up to ``=`` without blanks, or a quoted
string; ``;`` starts a comment). The first section (``gd_scene`` / ``gd_resource``) says the format:
``format=2`` and below is Godot 3, 3 and up is Godot 4, which picks the dialect for the values.
References to other resources stay :class:`~godot_dissect.values.ResourceRef`.

    scene = load("player.tscn")
    scene.nodes[0].attrs["name"], scene.sub_resources[1].properties["radius"]
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .spec import get_dialect
from .text.parser import IDENT, PUNCT, Reader, TextParseError
from .values import ResourceRef

__all__ = ["Resource", "Scene", "Section", "TextParseError", "load", "loads"]


@dataclass
class Section:
    """One ``[tag ...]`` with the ``key = value`` lines under it."""

    tag: str
    attrs: dict[str, Any] = field(default_factory=dict)
    properties: dict[str, Any] = field(default_factory=dict)
    line: int = 0
    source: dict[str, str] = field(default_factory=dict)  # property -> its value as written

    @property
    def id(self) -> Any:
        return self.attrs.get("id")


@dataclass
class _TextFile:
    descriptor: Section
    sections: list[Section]
    dialect: str

    @property
    def format(self) -> int | None:
        return self.descriptor.attrs.get("format")

    def _tagged(self, tag: str) -> list[Section]:
        return [s for s in self.sections if s.tag == tag]

    @property
    def ext_resources(self) -> dict[Any, Section]:
        return {s.id: s for s in self._tagged("ext_resource")}

    @property
    def sub_resources(self) -> dict[Any, Section]:
        return {s.id: s for s in self._tagged("sub_resource")}

    def resolve(self, ref: ResourceRef) -> Section | None:
        """The section a ``SubResource``/``ExtResource`` reference points at."""
        table = self.sub_resources if ref.kind == "SubResource" else self.ext_resources
        return table.get(ref.id)


@dataclass
class Scene(_TextFile):
    """A ``[gd_scene]`` file: nodes (the first one is the root), connections, editable paths."""

    @property
    def nodes(self) -> list[Section]:
        return self._tagged("node")

    @property
    def connections(self) -> list[Section]:
        return self._tagged("connection")

    @property
    def editables(self) -> list[Section]:
        return self._tagged("editable")

    def node_path(self, node: Section) -> str:
        """The node's path from the root ("." for the root), as ``parent`` attributes write it."""
        parent = node.attrs.get("parent")
        if parent is None:
            return "."
        parent = str(parent)
        return node.attrs["name"] if parent == "." else f"{parent}/{node.attrs['name']}"

    def node(self, path: str) -> Section | None:
        return next((n for n in self.nodes if self.node_path(n) == path), None)


@dataclass
class Resource(_TextFile):
    """A ``[gd_resource]`` file: sub-resources and the ``[resource]`` section itself."""

    @property
    def resource(self) -> Section | None:
        return next(iter(self._tagged("resource")), None)


def _dialect_for(fmt: Any) -> str:
    return "godot3" if isinstance(fmt, int) and fmt <= 2 else "godot4"


class _Loader:
    def __init__(self, text: str, dialect: str | None) -> None:
        self.text = text.removeprefix("\ufeff")
        self.fixed = dialect
        self.reader = Reader(self.text, dialect or "godot4")
        self._line, self._line_pos = 1, 0  # line number at _line_pos: sections come in order, so
        # each one's line is counted on from the previous one's (linear in the file, not per section)

    def run(self) -> _TextFile:
        sections: list[Section] = []
        r = self.reader
        while True:
            r.skip_space()
            if r.pos >= len(self.text):
                break
            if self.text[r.pos] == "[":
                sections.append(self.tag())
                if len(sections) == 1 and self.fixed is None:
                    dialect = _dialect_for(sections[0].attrs.get("format"))
                    self.reader = r = Reader(self.text, dialect, r.pos)
                continue
            start = r.pos
            key = self.key()
            if not sections:
                raise r.error(f"property {key!r} before any [section]", start)
            vstart = r.pos
            value = self.value()
            sections[-1].properties[key] = value
            sections[-1].source[key] = self.text[vstart:r.pos].strip()
        if not sections:
            raise r.error("no [gd_scene] or [gd_resource] section")
        head = sections[0]
        cls = Scene if head.tag == "gd_scene" else Resource
        return cls(head, sections, self.reader.dialect.name)

    def value(self) -> Any:
        r = self.reader
        value = r.value()
        if r._peeked is not None:  # give back a token read ahead
            r.pos, r._peeked = r._peeked.pos, None
        return value

    def tag(self) -> Section:
        r = self.reader
        start = r.pos
        self._line += self.text.count("\n", self._line_pos, start)
        self._line_pos = start
        line = self._line
        r.expect("[")
        tok = r.next()
        if tok.kind != IDENT:
            raise r.error(f"expected a section name, got {r.describe(tok)}", tok.pos)
        name = tok.value
        while r.peek().kind == PUNCT and r.peek().value in ".:":  # [someprop.Android]
            name += r.next().value
            part = r.next()
            if part.kind != IDENT:
                raise r.error(f"expected a name, got {r.describe(part)}", part.pos)
            name += part.value
        section = Section(name, line=line)
        while True:
            tok = r.next()
            if tok.kind == PUNCT and tok.value == "]":
                return section
            if tok.kind != IDENT:
                raise r.error(f"expected an attribute name or ']', got {r.describe(tok)}", tok.pos)
            r.expect("=")
            section.attrs[tok.value] = self.value()

    def key(self) -> str:
        """Everything up to '=' without blanks, or a quoted string (the engine reads keys this way)."""
        r = self.reader
        text, i, n = self.text, r.pos, len(self.text)
        key: list[str] = []
        while i < n:
            c = text[i]
            if c == "=":
                r.pos = i + 1
                return "".join(key)
            if c == ";":
                j = text.find("\n", i)
                i = n if j < 0 else j + 1
                continue
            if c == '"':
                r.pos = i
                key = [r._string()]
                i = r.pos
                continue
            if c > " ":
                key.append(c)
            i += 1
        raise r.error(f"expected '=' after {''.join(key)!r}", n)


def loads(text: str, dialect: str | None = None) -> Scene | Resource:
    """Read a .tscn/.tres/.escn held in a string. ``dialect`` overrides the one the format implies."""
    if dialect is not None:
        dialect = get_dialect(dialect).name
    return _Loader(text, dialect).run()  # type: ignore[return-value]


def load(source: str | os.PathLike[str], dialect: str | None = None) -> Scene | Resource:
    """Read a .tscn/.tres/.escn from a path, or from text when ``source`` looks like a file's content."""
    if isinstance(source, str) and (source.lstrip().startswith("[") or "\n" in source):
        return loads(source, dialect)
    data = Path(source).read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:  # the engine reads these files as UTF-8 too
        line = data.count(b"\n", 0, e.start) + 1
        column = e.start - data.rfind(b"\n", 0, e.start)
        raise TextParseError(f"not UTF-8: byte 0x{data[e.start]:02x} at file offset {e.start} ({e.reason})",
                             line, column) from None
    return loads(text, dialect)
