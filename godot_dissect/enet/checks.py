"""Evaluate the spec's per-command acceptance rules (``spec.enet.Check``) on parsed field values."""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping

from ..spec.enet import Check

_OPS: dict[str, Callable[[int, int], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
    "==": operator.eq, "!=": operator.ne,
}
_ARITH: dict[str, Callable[[int, int], int]] = {"-": operator.sub, "+": operator.add}


def operand(right: int | str | tuple[str, str, str], values: Mapping[str, int]) -> int:
    if isinstance(right, int):
        return right
    if isinstance(right, str):
        return values[right]
    a, op, b = right
    return _ARITH[op](values[a], values[b])


def first_failure(checks: tuple[Check, ...], values: Mapping[str, int]) -> Check | None:
    """The first rule the values break (ENet checks them in this order), or None."""
    for c in checks:
        if not _OPS[c.op](values[c.left], operand(c.right, values)):
            return c
    return None


def describe(check: Check, values: Mapping[str, int]) -> str:
    """``reason (left=v op right=w)`` for an error message."""
    r = check.right
    if isinstance(r, int):
        rhs = str(r)
    elif isinstance(r, str):
        rhs = f"{r}={values[r]}"
    else:
        rhs = f"{r[0]} {r[1]} {r[2]}={operand(r, values)}"
    return f"{check.reason} ({check.left}={values[check.left]}, must be {check.op} {rhs})"
