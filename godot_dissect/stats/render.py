"""Tables as text: rich (human units), CSV and JSON (plain numbers), Markdown."""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any

from ..spec.stats import MAX_DISPLAY_ROWS
from .profile import Profile

_UNITS = ("B", "kB", "MB", "GB", "TB")


def human_bytes(n: float, suffix: str = "") -> str:
    """1234 -> "1.2 kB" (powers of 1000, as Wireshark's human units)."""
    n = float(n)
    i = 0
    while abs(n) >= 1000 and i < len(_UNITS) - 1:
        n /= 1000
        i += 1
    text = f"{n:.0f}" if i == 0 else f"{n:.1f}"
    return f"{text} {_UNITS[i]}{suffix}"


def _human(value: Any, unit: str | None, t0: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if unit == "bytes":
        return human_bytes(value)
    if unit == "Bps":
        return human_bytes(value, "/s")
    if unit == "ms":
        return f"{value:.2f} ms"
    if unit == "s":
        return f"{value:.3f} s"
    if unit == "time":
        return f"{value - t0:.3f} s" if t0 is not None else str(value)
    if isinstance(value, bool):
        return "yes" if value else ""
    return str(value)


def _numeric(rows: list[tuple], i: int) -> bool:
    """Every value of column ``i`` is a number (ids and channels included: right-aligned)."""
    vals = [r[i] for r in rows if r[i] is not None]
    return bool(vals) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals)


def _plain(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 6)
    return value


def rich_tables(p: Profile, names: list[str]) -> list[Any]:
    """One rich Table per name (times relative to the capture's first frame)."""
    from rich.table import Table

    t0 = p.traffic.t0
    out = []
    for name in names:
        cols = p.columns(name)
        rows = p.rows(name)
        hidden = len(rows) - MAX_DISPLAY_ROWS
        caption = (f"{hidden} more rows not drawn (MAX_DISPLAY_ROWS): --format csv, json or markdown prints "
                   "them all") if hidden > 0 else None
        table = Table(title=f"{name}" + ("" if rows else f": {p.empty_note(name)}"), title_justify="left",
                      caption=caption, caption_justify="left")
        for c, unit in cols:
            table.add_column(c, justify="right" if unit or c in ("count", "frames", "messages") else "left")
        for r in rows[:MAX_DISPLAY_ROWS]:
            table.add_row(*(_human(v, u, t0) for v, (_, u) in zip(r, cols, strict=True)))
        out.append(table)
    return out


def csv_text(p: Profile, names: list[str]) -> str:
    """One CSV per table with a header row; several tables: each after a ``# name`` line."""
    buf = io.StringIO()
    for i, name in enumerate(names):
        if len(names) > 1:
            buf.write(("\n" if i else "") + f"# {name}\n")
        w = csv.writer(buf, lineterminator="\n")
        w.writerow([c for c, _ in p.columns(name)])
        for r in p.rows(name):
            w.writerow(["" if v is None else _plain(v) for v in r])
    return buf.getvalue()


def json_text(p: Profile, names: list[str]) -> str:
    """One JSON object per table, under its name: ``{"columns": [...], "rows": [{column: value}]}``
    (plus ``"note"`` when it is empty); ``"notes"`` at the top when there are any."""
    out: dict[str, Any] = {}
    for name in names:
        cols = [c for c, _ in p.columns(name)]
        rows = [{c: _plain(v) for c, v in zip(cols, r, strict=True)} for r in p.rows(name)]
        out[name] = {"columns": cols, "rows": rows}
        if not rows:
            out[name]["note"] = p.empty_note(name)
    if p.notes:
        out["notes"] = p.notes
    return json.dumps(out, ensure_ascii=False, indent=1) + "\n"


def markdown_text(p: Profile, names: list[str]) -> str:
    t0 = p.traffic.t0
    parts = []
    for name in names:
        cols = p.columns(name)
        rows = p.rows(name)
        lines = [f"### {name}", ""]
        if not rows:
            lines.append(f"_{p.empty_note(name)}_")
        else:
            lines.append("| " + " | ".join(c for c, _ in cols) + " |")
            lines.append("|" + "|".join("---:" if u or _numeric(rows, i) else "---" for i, (_, u) in enumerate(cols))
                         + "|")
            for r in rows:
                cells = (_human(v, u, t0).replace("|", "\\|") for v, (_, u) in zip(r, cols, strict=True))
                lines.append("| " + " | ".join(cells) + " |")
        parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)

