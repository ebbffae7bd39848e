"""The fields of a message record, written once: name, value type, the record JSON key it comes from and
what it means. The Arrow schema of a dataset (``dataset.schema``) and the display filter's field names
(``cli.filter``) are read from this table; neither imports the other (the filter must not load pyarrow
at start-up), so the table is plain data.

Types: ``int64``/``int32``/``float64`` (numbers), ``string``, ``large_string`` (one message's text can
pass 2 GiB over a batch), ``bool``, ``timestamp`` (microseconds, UTC; JSON: seconds since 1970 with 6
decimals). ``json_text``: the column holds the JSON text of the key's value.
"""

from __future__ import annotations

from .row import row


@row
class RecordField:
    name: str
    type: str
    key: str  # the record JSON key this field holds ("" when it is not a key of the record)
    meaning: str
    json_text: bool = False


NUMBER_TYPES = frozenset({"int64", "int32", "float64", "timestamp"})

RECORD_FIELDS: tuple[RecordField, ...] = (
    RecordField("frame", "int64", "frame", "frame that completed the message (Wireshark's number, from 1)"),
    RecordField("time", "timestamp", "time", "capture time of that frame (JSON: seconds since 1970, 6 decimals)"),
    RecordField("src", "string", "src", "source IP address"),
    RecordField("sport", "int32", "sport", "source port"),
    RecordField("dst", "string", "dst", "destination IP address"),
    RecordField("dport", "int32", "dport", "destination port"),
    RecordField("transport", "string", "transport", "udp, tcp or websocket"),
    RecordField("direction", "string", "direction", "c2s (from the side that opened the conversation) or s2c"),
    RecordField("dialect", "string", "dialect",
                "godot3, godot4 ... (empty for an error before the dialect was known)"),
    RecordField("kind", "string", "kind",
                "variant, debugger, text, error, or a multiplayer kind (rpc, rset, sync ...)"),
    RecordField("type", "string", "type", "the engine's name for the value's type in the dialect"),
    RecordField("message", "string", "message", "remote debugger message name"),
    RecordField("node", "string", "node", "multiplayer: node path (from the path cache or sent inline)"),
    RecordField("method", "string", "method", "multiplayer: RPC method name (Godot 4: when the names are known)"),
    RecordField("method_id", "int64", "method_id", "Godot 4 RPC method id"),
    RecordField("name", "string", "", "rset: the property set (the record calls it `method`)"),
    RecordField("channel", "int32", "channel", "ENet channel"),
    RecordField("peer", "int64", "peer", "peer id a peer/sys message is about, or the relay peer"),
    RecordField("sender", "int64", "sender", "multiplayer peer id that sent the message"),
    RecordField("receiver", "int64", "receiver", "multiplayer peer id the message was for"),
    RecordField("transfer", "string", "transfer", "reliable, unreliable or unreliable_ordered"),
    RecordField("relayed", "bool", "relayed", "the server relayed it for another peer"),
    RecordField("app_bytes", "int64", "app_bytes", "message size as the application (MultiplayerAPI) sees it"),
    RecordField("wire_bytes", "float64", "wire_bytes", "its share of the on-the-wire frame bytes that carried it"),
    RecordField("length", "int64", "length", "bytes of the message as decoded"),
    RecordField("offset", "int64", "offset", "stream offset of the message (0 for datagrams)"),
    RecordField("command", "string", "command", "the engine's command name (REMOTE_CALL, SYS, CONNECT ...)"),
    RecordField("thread", "int64", "thread", "remote debugger thread id (Godot 4.2+)"),
    RecordField("error", "string", "error", "why the message is malformed: offset and reason"),
    RecordField("hex", "large_string", "hex", "error records: the first 256 bytes of the message, in hex"),
    RecordField("fields", "large_string", "fields",
                "the rest of the packet (cache ids, md5, headers ...) as JSON text", True),
    RecordField("text", "large_string", "text", "the value in the engine's var_to_str notation"),
    RecordField("value", "large_string", "value",
                "the value's lossless JSON form (godot_dissect.jsonform) as JSON text", True),
    RecordField("capture", "string", "", "file name of the capture (a Hive partition of an exported dataset)"),
)
