"""``bandwidth_png``: wire bytes per second over time, one panel per peer and direction, stacked by
node (or method), drawn with matplotlib's Agg backend (no display needed)."""

from __future__ import annotations

from typing import Any

from .profile import Profile
from .traffic import NO_MESSAGE, _ep

#: panels drawn (the directions with the most bytes) and stacked series per panel (the rest: "other")
MAX_PANELS = 6
MAX_STACKS = 8


def _label(p: Profile, dkey: tuple) -> str:
    proto, src, sport, dst, dport = dkey
    s, d = _ep(src, sport), _ep(dst, dport)
    sp, dp = p.traffic.peers.get(s), p.traffic.peers.get(d)
    who = (f"peer {sp}" if sp is not None else s) + " → " + (f"peer {dp}" if dp is not None else d)
    return f"{who} ({proto})"


def bandwidth_png(p: Profile, path: Any, width: int = 1200, height: int = 800, dpi: int = 100) -> Any:
    """Write the plot (``width`` x ``height`` pixels) and return the matplotlib Figure. Needs a
    profile made with ``series=True``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    s = p.traffic.series
    if s is None:
        raise ValueError("the profile keeps no series: make it with profile(..., series=True)")
    step = p.interval * s.scale
    totals: dict[tuple, float] = {}
    for dkey, d in s.frames.items():
        totals[dkey] = sum(d.values())
    godot = {dkey for dkey, _ in s.labelled}
    panels = sorted((k for k in totals if k in godot), key=lambda k: -totals[k])[:MAX_PANELS]
    fig, axes = plt.subplots(max(len(panels), 1), 1, figsize=(width / dpi, height / dpi), dpi=dpi,
                             sharex=True, squeeze=False)
    first = min((w for d in s.frames.values() for w in d), default=0)  # below 0: frames earlier than the first
    last = max((w for d in s.frames.values() for w in d), default=0)
    windows = range(first, last + 1)
    xs = [w * step for w in range(first, last + 2)]  # "post" steps: one more edge closes the last window
    tab10 = plt.get_cmap("tab10").colors  # type: ignore[attr-defined]
    palette = [c for i, c in enumerate(tab10) if i != 7]  # tab10's grey is kept for "other"
    colors: dict[str, Any] = {NO_MESSAGE: "0.82", "other": "0.45"}
    for ax, dkey in zip(axes[:, 0], panels, strict=False):
        stacks: dict[str, list[float]] = {}
        for (k, label), d in s.labelled.items():
            if k == dkey:
                stacks[label or "?"] = [d.get(w, 0.0) / step for w in windows]
        order = sorted((lb for lb in stacks if any(stacks[lb])), key=lambda lb: -sum(stacks[lb]))
        if len(order) > MAX_STACKS:
            rest = order[MAX_STACKS - 1:]
            stacks["other"] = [sum(stacks[lb][i] for lb in rest) for i in range(len(windows))]
            order = [*order[:MAX_STACKS - 1], "other"]
        frames = s.frames.get(dkey, {})
        messages = [sum(stacks[lb][i] for lb in order) for i in range(len(windows))]
        control = [max(frames.get(w, 0.0) / step - messages[i], 0.0) for i, w in enumerate(windows)]
        for lb in order:
            colors.setdefault(lb, palette[(len(colors) - 2) % len(palette)])
        layers = [[*stacks[lb], stacks[lb][-1]] for lb in order] + [[*control, control[-1]]]
        ax.stackplot(xs, *layers, labels=[*order, NO_MESSAGE], colors=[colors[lb] for lb in [*order, NO_MESSAGE]],
                     step="post")
        ax.set_title(_label(p, dkey), fontsize=9, loc="left")
        ax.set_ylabel("wire bytes/s")
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    if not panels:
        axes[0, 0].set_title("no Godot traffic")
    axes[-1, 0].set_xlabel(f"time since the first frame (s), {step:g} s windows")
    fig.suptitle("Godot traffic on the wire, stacked by " + ("method" if p.by == "method" else "node"))
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=dpi)
    plt.close(fig)
    return fig
