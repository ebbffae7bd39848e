"""Command byte + layout: a multiplayer packet to (command, form, values) and back, from the spec."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..spec.multiplayer import Command, Form, Protocol
from .layout import LayoutError, Scope, check_size, holds, read_items, write_items


def command_of(protocol: Protocol, data: bytes | memoryview) -> Command | None:
    bits = protocol.command_byte.bits[0]
    return protocol.command(bits.get(data[0])) if len(data) else None


def pick_form(command: Command, scope: Scope, size: int, hint: str | None = None) -> Form:
    """The form a packet uses: the one its flags select, else the one its size fits (CONFIRM_PATH
    4.3+ is exactly 6 bytes), else the first; ``hint`` names a form to prefer."""
    forms = [f for f in command.forms if holds(f.when, scope)] or list(command.forms)
    if hint is not None:
        for f in forms:
            if f.name == hint:
                return f
    for f in forms:
        if f.exact_size is not None and f.exact_size == size:
            return f
    for f in forms:
        if f.exact_size is None:
            return f
    return forms[0]


def read_packet(protocol: Protocol, data: bytes | memoryview, form_hint: str | None = None
                ) -> tuple[Command, Form, Scope]:
    """Parse one packet; raise LayoutError (with what was read kept in ``err.partial``)."""
    if not len(data):
        raise LayoutError(0, "empty packet")
    command = command_of(protocol, data)
    if command is None:
        raise LayoutError(0, f"unknown command {protocol.command_byte.bits[0].get(data[0])} "
                             f"(byte 0x{data[0]:02x})")
    scope = Scope()
    scope.values["command"] = data[0]
    for b in command.flags:
        scope.values[b.name] = b.get(data[0])
    form = pick_form(command, scope, len(data), form_hint)
    try:
        check_size(form, len(data), 0, command.name)
        read_items(form.items, data, 1, len(data), scope)
    except LayoutError as e:
        e.partial = (command, form, scope)  # type: ignore[attr-defined]
        raise
    return command, form, scope


def write_packet(protocol: Protocol, command_name: str, values: Mapping[str, Any], form: str | None = None) -> bytes:
    """Build a packet: the command byte (command number + the command's flag values) and the
    form's fields from ``values``."""
    command = protocol.by_name(command_name)
    byte = protocol.command_byte.bits[0].put(command.id)
    for b in command.flags:
        byte |= b.put(int(values.get(b.name, 0)))
    scope = Scope(values={b.name: b.get(byte) for b in command.flags})
    chosen = pick_form(command, scope, -1, form)
    out = bytearray([byte])
    write_items(chosen.items, {**scope.values, **values}, out)
    return bytes(out)
