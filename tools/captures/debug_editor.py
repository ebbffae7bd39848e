"""A small stand-in for the Godot 3.2 editor's remote-debugger side (``ScriptEditorDebugger``).

It listens on 127.0.0.1, accepts one game (started with ``--remote-debug 127.0.0.1:PORT``), reads
the game's PDUs (``[u32 LE length][Variant]``; one logical message = name String PDU, argument
count INT PDU, then that many argument PDUs) and answers with single-PDU commands
``[command, args...]`` like the real editor does.  It records every PDU in both directions as raw
bytes, so that the golden can be made by the engine itself (``decode_pdus.gd``) and not by us.

Only the protocol logic (which message came, which command to send next) uses our own codec
(``godot_dissect.decode_prefix`` / ``godot_dissect.encode``).
"""

from __future__ import annotations

import select
import socket
import struct
import time
from dataclasses import dataclass, field
from typing import Any

from godot_dissect import decode_prefix, encode
from godot_dissect.values import Vector2

GAME_SCRIPT = "res://debug_game.gd"


@dataclass
class Pdu:
    direction: str  # "game->editor" or "editor->game"
    body: bytes  # the encoded Variant (without the 4-byte length prefix)
    t: float  # seconds since the game connected
    message_index: int  # logical message number within its direction
    part: str  # "name", "argc", "arg" (game->editor) or "command" (editor->game)
    arg: int | None = None


@dataclass
class Message:
    name: str
    args: list[Any] = field(default_factory=list)


class StandInEditor:
    """One debugging session; ``run()`` returns when the game disconnects or the deadline passes."""

    def __init__(self, port: int, breakpoint_line: int, deadline: float = 15.0) -> None:
        self.port = port
        self.breakpoint_line = breakpoint_line
        self.deadline = deadline
        self.pdus: list[Pdu] = []
        self.messages: list[Message] = []  # game->editor, decoded by our codec (logic only)
        self.commands: list[list[Any]] = []
        self.log: list[str] = []
        self.game_addr: tuple[str, int] | None = None
        self._sock: socket.socket | None = None
        self._buf = bytearray()
        self._cur: Message | None = None
        self._argc = -1
        self._n_in = 0
        self._t0 = 0.0
        self._timers: list[tuple[float, list[Any]]] = []
        self._ids: dict[str, int] = {}
        self._stage = "run"
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", port))
        self.listener.listen(1)

    # -- sending -------------------------------------------------------------------------------
    def send(self, cmd: list[Any]) -> None:
        body = encode(cmd, "godot3")
        assert self._sock is not None
        self._sock.sendall(struct.pack("<I", len(body)) + body)
        self.pdus.append(Pdu("editor->game", body, self._now(), len(self.commands), "command"))
        self.commands.append(cmd)
        self.log.append(f"{self._now():6.3f} editor->game {cmd!r}")

    def _now(self) -> float:
        return time.monotonic() - self._t0

    # -- receiving -----------------------------------------------------------------------------
    def _feed(self, data: bytes) -> None:
        self._buf += data
        while len(self._buf) >= 4:
            (n,) = struct.unpack_from("<I", self._buf)
            if len(self._buf) < 4 + n:
                break
            body = bytes(self._buf[4:4 + n])
            del self._buf[:4 + n]
            self._pdu(body)

    def _pdu(self, body: bytes) -> None:
        value, _used = decode_prefix(body, "godot3")
        mi = len(self.messages)
        if self._cur is None:
            if not isinstance(value, str):
                raise RuntimeError(f"expected a message name PDU, got {value!r}")
            self._cur = Message(value)
            self._argc = -1
            self.pdus.append(Pdu("game->editor", body, self._now(), mi, "name"))
            return
        if self._argc < 0:
            if type(value) is not int:
                raise RuntimeError(f"expected an argument count PDU, got {value!r}")
            self._argc = value
            self.pdus.append(Pdu("game->editor", body, self._now(), mi, "argc"))
        else:
            self.pdus.append(Pdu("game->editor", body, self._now(), mi, "arg", len(self._cur.args)))
            self._cur.args.append(value)
        if len(self._cur.args) == self._argc:
            msg, self._cur = self._cur, None
            self.messages.append(msg)
            self.log.append(f"{self._now():6.3f} game->editor {msg.name} argc={len(msg.args)}")
            self._on_message(msg)

    # -- the script of the session -------------------------------------------------------------
    def _later(self, delay: float, cmd: list[Any]) -> None:
        self._timers.append((self._now() + delay, cmd))

    def _on_connect(self) -> None:
        self.send(["breakpoint", GAME_SCRIPT, self.breakpoint_line, True])
        self.send(["request_scene_tree"])
        self.send(["request_video_mem"])
        self._later(0.3, ["request_scene_tree"])
        self._later(0.5, ["start_profiling", 10])
        self._later(0.8, ["stop_profiling"])
        self._later(1.3, ["start_network_profiling"])
        self._later(1.8, ["stop_network_profiling"])

    def _on_message(self, msg: Message) -> None:
        if msg.name == "output":
            for line in msg.args:
                # Godot 3.2.3 sends each output line as [text, type] (0 log, 1 error).
                text = line[0] if isinstance(line, list) and line else line
                if not isinstance(text, str):
                    continue
                for key in ("inspect_id", "player_id"):
                    if text.startswith(key + "=") and key not in self._ids:
                        self._ids[key] = int(text.split("=", 1)[1])
                        if key == "inspect_id":
                            self.send(["inspect_object", self._ids[key]])
        elif msg.name == "debug_enter":
            self._stage = "break"
            self.send(["get_stack_dump"])
        elif msg.name == "stack_dump" and self._stage == "break":
            self.send(["get_stack_frame_vars", 0])
        elif msg.name == "stack_frame_vars" and self._stage == "break":
            self._stage = "continue"
            self.send(["breakpoint", GAME_SCRIPT, self.breakpoint_line, False])
            self.send(["continue"])
        elif msg.name == "debug_exit":
            self._stage = "after"
            if "player_id" in self._ids:
                self.send(["set_object_property", self._ids["player_id"], "position", Vector2(10.0, 20.0)])
            self.send(["set_skip_breakpoints", True])
            self._later(0.4, ["request_scene_tree"])
            if "player_id" in self._ids:
                self._later(0.5, ["inspect_object", self._ids["player_id"]])

    def run(self) -> None:
        self.listener.settimeout(self.deadline)
        try:
            self._sock, self.game_addr = self.listener.accept()
        finally:
            self.listener.close()
        self._t0 = time.monotonic()
        self.log.append(f"connected from {self.game_addr}")
        self._on_connect()
        sock = self._sock
        try:
            while self._now() < self.deadline:
                due = [c for t, c in self._timers if t <= self._now()]
                self._timers = [(t, c) for t, c in self._timers if t > self._now()]
                for cmd in due:
                    self.send(cmd)
                r, _, _ = select.select([sock], [], [], 0.02)
                if not r:
                    continue
                data = sock.recv(1 << 20)
                if not data:
                    self.log.append(f"{self._now():6.3f} game closed the connection")
                    break
                self._feed(data)
        finally:
            sock.close()
        if self._buf or self._cur is not None:
            self.log.append(f"incomplete data at the end: {len(self._buf)} bytes, message {self._cur!r}")
