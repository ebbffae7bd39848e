"""``dialects`` and ``types``: the spec as tables (the README's tables come from here)."""

from __future__ import annotations

import argparse

from ..spec import DIALECTS, get_dialect
from ..spec import layouts as L
from .options import add_dialect


def register(sub: argparse._SubParsersAction) -> None:
    d = sub.add_parser("dialects", help="list the dialects")
    d.set_defaults(run=run_dialects)
    t = sub.add_parser("types", help="print a dialect's type table (markdown)")
    add_dialect(t)
    t.set_defaults(run=run_types)


def run_dialects(args: argparse.Namespace) -> int:
    for d in DIALECTS.values():
        print(f"{d.name:18} {len(d.entries):2} types  {d.title}")
    return 0


def describe_layout(layout: L.Layout) -> str:
    if isinstance(layout, L.Struct):
        return f"{len(layout.fields)} x {layout.component.name}: " + ", ".join(layout.fields)
    if isinstance(layout, L.Number):
        return f"{layout.narrow.name}, or {layout.wide.name} with the 64-bit flag"
    if isinstance(layout, L.Packed):
        el = f"{layout.width} x {layout.component.name}" if layout.width > 1 else layout.component.name
        stride = f" (stride {layout.stride})" if layout.stride else ""
        return f"i32 count, count x {el}{stride}"
    return (layout.__doc__ or layout.kind).strip().split("\n")[0]


def run_types(args: argparse.Namespace) -> int:
    d = get_dialect(args.dialect)
    print(f"| id | {d.name} name | payload | header bits 16+ | since |")
    print("|---:|---|---|---|---|")
    for e in d.entries:
        bits = ", ".join(f"{f.name} ({f.shift}-{f.shift + f.bits - 1})" if f.bits > 1 else f"{f.name} ({f.shift})"
                         for f in e.typedef.header_fields)
        print(f"| {e.id} | {e.name} | {describe_layout(e.typedef.layout)} | {bits} | {e.since or ''} |")
    return 0
