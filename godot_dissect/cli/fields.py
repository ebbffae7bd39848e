"""``read -T fields -e FIELD ... [-E OPTION=VALUE]``: one line per record, as ``tshark -T fields``.

Field names are the display filter's (``filter.FIELDS``, ``fields.NAME``). A field the record does
not have prints as nothing; a field with two values (``addr``, ``port``: both ends) joins them with
the aggregator; booleans print 1/0 and text keeps to one line and one column (newlines as ``\\n``, tabs
as ``\\t``), as tshark does.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..records import Record
from .filter import field_getter, field_names

#: tshark's -E options this writer knows, with their default values
DEFAULTS = {"header": "n", "separator": "\t", "quote": "n", "aggregator": ","}
_NAMED_CHARS = {"/t": "\t", "/s": " "}


def _char(value: str) -> str:
    return _NAMED_CHARS.get(value, value)


class FieldWriter:
    def __init__(self, fields: list[str], options: list[str]) -> None:
        self.names = fields
        self.getters: list[Callable[[Record], Any]] = []
        for name in fields:
            found = field_getter(name)
            if found is None:
                raise ValueError(f"-e: unknown field {name!r}; valid fields: {', '.join(field_names())}")
            self.getters.append(found[1])
        opts = dict(DEFAULTS)
        for opt in options:
            key, eq, value = opt.partition("=")
            if not eq or key not in DEFAULTS:
                raise ValueError(f"-E {opt}: expected one of {', '.join(k + '=...' for k in DEFAULTS)}")
            opts[key] = value
        if opts["header"] not in ("y", "n"):
            raise ValueError(f"-E header={opts['header']}: expected y or n")
        if opts["quote"] not in ("d", "s", "n"):
            raise ValueError(f"-E quote={opts['quote']}: expected d, s or n")
        self.header = opts["header"] == "y"
        self.separator = _char(opts["separator"])
        self.aggregator = _char(opts["aggregator"])
        self.quote = {"d": '"', "s": "'", "n": ""}[opts["quote"]]

    def header_line(self) -> str:
        return self.separator.join(self.names) + "\n"

    def line(self, rec: Record) -> str:
        q = self.quote
        return self.separator.join(f"{q}{self.text(get(rec))}{q}" for get in self.getters) + "\n"

    def text(self, v: Any) -> str:
        if v is None:
            return ""
        if isinstance(v, bool):
            return "1" if v else "0"
        if isinstance(v, tuple):
            return self.aggregator.join(self.text(x) for x in v)
        if isinstance(v, float):
            return f"{v:.6f}".rstrip("0").rstrip(".")
        if isinstance(v, (list, dict)):
            return json.dumps(v, ensure_ascii=False, default=str)
        s = str(v)
        if "\n" in s or "\r" in s or "\t" in s or "\\" in s:  # a tab too: it is the default separator
            s = s.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
        return s
