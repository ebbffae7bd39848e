"""Wrap engine-made SceneMultiplayer packets in ENet, as Godot 4's ENetMultiplayerPeer would send them.

ASSEMBLED, not captured: the SceneMultiplayer packets are the engine's, the ENet framing around them
is built here with godot_dissect.enet.build (E3's builders; no other ENet encoder), following ENet
1.3's rules for sequence numbers, fragmentation and acknowledgements:

* one UDP conversation per client with the server 127.0.0.1:SERVER_PORT; a CONNECT (channelCount 255,
  the client's unique id in ``data``) / VERIFY_CONNECT / ACK handshake before the client's first
  packet, a client DISCONNECT when it leaves;
* channels and reliability of ENetMultiplayerPeer::put_packet (transports.md §7.3): RELIABLE ->
  SEND_RELIABLE on ENet channel 0; UNRELIABLE -> SEND_UNSEQUENCED, UNRELIABLE_ORDERED ->
  SEND_UNRELIABLE, both on channel 1; transfer channel N > 0 -> ENet channel N + 1 (the spec's
  ChannelMap); packets longer than a fragment (MTU 1392 - 28 bytes) -> SEND_FRAGMENT (reliable) or
  SEND_UNRELIABLE_FRAGMENT;
* the packets one peer sends to another in one go share datagrams (up to the MTU, 32 commands); a
  datagram with reliable commands carries the sent time and is acknowledged by one ACK datagram.

Timestamps start at a fixed epoch so that the same packets give the same file.
"""

from __future__ import annotations

import socket
import zlib
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import dpkt
from engine_log import Packet

from godot_dissect.enet import build
from godot_dissect.enet.model import Command
from godot_dissect.spec import enet as enet_spec
from godot_dissect.spec import multiplayer as mp_spec

LOCALHOST = "127.0.0.1"
SERVER_PORT = 7000
EPOCH = 1767225600.0  # 2026-01-01 00:00:00 UTC
STEP_SECONDS = 0.020  # scenario steps are engine frames apart
GAP = 0.0002  # between datagrams
MTU = enet_spec.DEFAULT_MTU[4]
CHANNEL_COUNT = max(g for g, major in enet_spec.GODOT_MAJOR_BY_CHANNEL_COUNT.items() if major == 4)
SERVER_ID = 1
ASSEMBLED = "assembled: ENet framing by godot_dissect from engine-produced SceneMultiplayer packets"

# ENetMultiplayerPeer::put_packet (4.x): channel and ENet command per transfer mode, from the spec
_CMAP = mp_spec.ENET_CHANNELS[4]

Addr = tuple[str, int]


@dataclass
class Link:
    """One direction of one conversation: addresses, the peer id ENet writes in the header (the
    receiver's index for this peer) and the sender's sequence counters."""

    src: Addr
    dst: Addr
    header_peer_id: int
    clock_start: float
    reliable: dict[int, int] = field(default_factory=lambda: defaultdict(int))  # ENet channel (0xFF control)
    unreliable: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    unsequenced_group: int = 0

    @property
    def flow(self) -> str:
        return f"udp {self.src[0]}:{self.src[1]} -> {self.dst[0]}:{self.dst[1]}"

    def sent_time(self, t: float) -> int:
        return int(round((t - self.clock_start) * 1000)) & 0xFFFF


@dataclass
class Frame:
    number: int
    time: float
    link: Link
    payload: bytes
    sent_time: int | None
    commands: list[tuple[Command, dict[str, Any]]]  # with what each carries ({"seq", "fragment"})


@dataclass
class Delivery:
    """Where one SceneMultiplayer packet went: its conversation, ENet channel and command, frames."""

    flow: str
    enet_channel: int
    enet_command: str
    frames: list[int] = field(default_factory=list)

    def fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {"frame": self.frames[-1], "enet_channel": self.enet_channel,
                               "enet_command": self.enet_command}
        if len(self.frames) > 1 or self.enet_command.endswith("FRAGMENT"):
            out.update(enet_fragments=len(self.frames), enet_frames=self.frames)
        return out


class Assembler:
    def __init__(self, client_ports: dict[int, int]) -> None:
        self.server: Addr = (LOCALHOST, SERVER_PORT)
        self.client_ports = client_ports
        self.frames: list[Frame] = []
        self.deliveries: dict[int, Delivery] = {}
        self.links: dict[tuple[int, int], Link] = {}
        self.t = EPOCH
        self.server_peers = 0  # ENet peer slots the server handed out

    # ---- time and frames

    def at_step(self, index: int) -> None:
        self.t = max(self.t, EPOCH + 0.1 + index * STEP_SECONDS)

    def _emit(self, link: Link, commands: list[tuple[Command, dict[str, Any]]], *, header_peer_id: int | None = None,
              ack: bool = True) -> Frame:
        self.t += GAP
        reliable = any(c.ack_requested for c, _ in commands)
        sent_time = link.sent_time(self.t) if reliable else None
        payload = build.build_datagram(link.header_peer_id if header_peer_id is None else header_peer_id,
                                       [c for c, _ in commands], sent_time=sent_time)
        frame = Frame(len(self.frames) + 1, self.t, link, payload, sent_time, commands)
        self.frames.append(frame)
        if reliable and ack:
            back = self._reverse(link)
            self._emit(back, [(build.acknowledge(c.channel, c.reliable_seq, sent_time), {})
                              for c, _ in commands if c.ack_requested], ack=False)
        return frame

    def _reverse(self, link: Link) -> Link:
        for lk in self.links.values():
            if lk.src == link.dst and lk.dst == link.src:
                return lk
        raise KeyError(link.flow)

    # ---- connections

    def connect(self, uid: int) -> None:
        client: Addr = (LOCALHOST, self.client_ports[uid])
        index = self.server_peers
        self.server_peers += 1
        up = self.links[(uid, SERVER_ID)] = Link(client, self.server, index, self.t)
        down = self.links[(SERVER_ID, uid)] = Link(self.server, client, 0, EPOCH)
        connect_id = zlib.crc32(f"connect {uid}".encode())  # ENet draws it at random
        up.reliable[enet_spec.CONTROL_CHANNEL] += 1
        hello = build.connect(0, connect_id, uid, CHANNEL_COUNT, mtu=MTU,
                              reliable_seq=up.reliable[enet_spec.CONTROL_CHANNEL])
        self._emit(up, [(hello, {})], header_peer_id=enet_spec.UNASSIGNED_PEER_ID, ack=False)
        down.reliable[enet_spec.CONTROL_CHANNEL] += 1
        verify = build.verify_connect(index, connect_id, CHANNEL_COUNT, mtu=MTU,
                                      reliable_seq=down.reliable[enet_spec.CONTROL_CHANNEL])
        # ENet never ACKs a CONNECT (the peer is ACKNOWLEDGING_CONNECT): VERIFY_CONNECT is the answer
        self._emit(down, [(verify, {})])

    def disconnect(self, uid: int) -> None:
        up = self.links[(uid, SERVER_ID)]
        up.reliable[enet_spec.CONTROL_CHANNEL] += 1
        self._emit(up, [(build.disconnect(0, reliable_seq=up.reliable[enet_spec.CONTROL_CHANNEL]), {})])

    # ---- SceneMultiplayer packets

    def send(self, batch: list[Packet]) -> None:
        """Packets one peer sent to one other peer in one go: ENet commands, packed into datagrams."""
        src, dst = batch[0].src, batch[0].dst
        link = self.links[(src, dst)]
        cmds: list[tuple[Command, dict[str, Any]]] = []
        for p in batch:
            ch = _CMAP.enet_channel(p.channel, p.transfer_mode)
            made = self._commands(link, ch, p)
            self.deliveries[p.seq] = Delivery(link.flow, ch, made[0].name)
            cmds += [(c, {"seq": p.seq, **({"fragment": i} if len(made) > 1 else {})}) for i, c in enumerate(made)]
        head = 2 + 2  # peer word + sent time
        chunk: list[tuple[Command, dict[str, Any]]] = []
        size = head
        for c in cmds:
            if chunk and (size + c[0].size > MTU or len(chunk) == enet_spec.MAX_PACKET_COMMANDS):
                self._flush(link, chunk)
                chunk, size = [], head
            chunk.append(c)
            size += c[0].size
        if chunk:
            self._flush(link, chunk)

    def _flush(self, link: Link, chunk: list[tuple[Command, dict[str, Any]]]) -> None:
        frame = self._emit(link, chunk)
        for _, carries in chunk:
            self.deliveries[carries["seq"]].frames.append(frame.number)

    def _commands(self, link: Link, ch: int, p: Packet) -> list[Command]:
        data = p.data
        send = _CMAP.sends[p.transfer_mode]
        if len(data) > build.fragment_length(MTU):
            reliable = enet_spec.COMMANDS_BY_NAME[send.fragment].delivery == "reliable"
            if reliable:
                cmds = build.fragments(ch, data, link.reliable[ch] + 1, mtu=MTU, reliable=True)
                link.reliable[ch] += len(cmds)
                return cmds
            # UNRELIABLE_FRAGMENT: unreliable start sequence, the channel's reliable sequence
            link.unreliable[ch] += 1
            return build.fragments(ch, data, link.unreliable[ch], mtu=MTU, reliable=False,
                                   reliable_seq=link.reliable[ch])
        if send.command == "SEND_RELIABLE":
            link.reliable[ch] += 1
            return [build.send_reliable(ch, link.reliable[ch], data)]
        if send.command == "SEND_UNSEQUENCED":
            link.unsequenced_group += 1
            return [build.send_unsequenced(ch, link.unsequenced_group, data)]
        link.unreliable[ch] += 1
        return [build.send_unreliable(ch, link.reliable[ch], link.unreliable[ch], data)]


def assemble(packets: list[Packet], steps: list[str], client_ports: dict[int, int],
             leaves: dict[int, int]) -> Assembler:
    """Frames for ``packets`` (in wire order).  A client connects right before its first packet;
    ``leaves`` maps a client to the seq of the packet its DISCONNECT goes right before."""
    asm = Assembler(client_ports)
    step_index = {s: i for i, s in enumerate(steps)}
    connected: set[int] = set()
    batch: list[Packet] = []

    def flush() -> None:
        if batch:
            asm.send(batch)
            batch.clear()

    for p in packets:
        same = batch and (batch[-1].src, batch[-1].dst, batch[-1].step) == (p.src, p.dst, p.step)
        if not same:
            flush()
            asm.at_step(step_index[p.step])
        for uid, before in leaves.items():
            if before == p.seq:
                flush()
                asm.disconnect(uid)
        client = p.dst if p.src == SERVER_ID else p.src
        if client not in connected:
            flush()
            asm.connect(client)
            connected.add(client)
        batch.append(p)
    flush()
    return asm


def write_pcapng(frames: list[Frame], path: str) -> None:
    shb = dpkt.pcapng.SectionHeaderBlockLE(opts=[
        dpkt.pcapng.PcapngOptionLE(code=dpkt.pcapng.PCAPNG_OPT_COMMENT, text=ASSEMBLED),
        dpkt.pcapng.PcapngOptionLE(code=dpkt.pcapng.PCAPNG_OPT_ENDOFOPT)])
    with open(path, "wb") as f:
        w = dpkt.pcapng.Writer(f, snaplen=65535, linktype=dpkt.pcap.DLT_EN10MB, shb=shb)
        for fr in frames:
            udp = dpkt.udp.UDP(sport=fr.link.src[1], dport=fr.link.dst[1], data=fr.payload)
            udp.ulen = len(udp)
            ip = dpkt.ip.IP(src=socket.inet_aton(fr.link.src[0]), dst=socket.inet_aton(fr.link.dst[0]), p=17,
                            ttl=64, df=1, data=udp)
            ip.len = len(ip)
            eth = dpkt.ethernet.Ethernet(src=b"\0" * 6, dst=b"\0" * 6, type=dpkt.ethernet.ETH_TYPE_IP, data=ip)
            w.writepkt(bytes(eth), ts=fr.time)


def frame_records(frames: list[Frame]) -> list[dict[str, Any]]:
    """The ENet datagrams of the assembled pcap, one line each: what was built (by construction)."""
    out = []
    for fr in frames:
        cmds = []
        for c, carries in fr.commands:
            r: dict[str, Any] = {"command": c.name, "channel": c.channel, "reliable_seq": c.reliable_seq}
            if c.ack_requested:
                r["ack"] = True
            if c.unsequenced:
                r["unsequenced"] = True
            r.update(c.fields)
            if c.data is not None:
                r["data_hex"] = c.data.hex() if len(c.data) <= 64 else c.data[:64].hex() + "..."
            if carries:
                r["carries"] = carries
            cmds.append(r)
        rec: dict[str, Any] = {"frame": fr.number, "time": round(fr.time - EPOCH, 6), "flow": fr.link.flow,
                               "kind": "enet", "peer_id": build_peer_id(fr), "session_id": 0}
        if fr.sent_time is not None:
            rec["sent_time"] = fr.sent_time
        rec.update(size=len(fr.payload), commands=cmds, golden_source=ASSEMBLED)
        out.append(rec)
    return out


def build_peer_id(fr: Frame) -> int:
    return int.from_bytes(fr.payload[:2], "big") & enet_spec.MAX_PEER_ID
