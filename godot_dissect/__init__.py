"""godot-dissect: Godot Engine network traffic made visible and testable."""

from .codec import decode, decode_prefix, encode
from .errors import DecodeError, EncodeError
from .spec import DIALECT_NAMES, get_dialect

__version__ = "0.1.0"

__all__ = [
    "DIALECT_NAMES", "DecodeError", "EncodeError", "TextParseError", "decode", "decode_prefix", "encode",
    "from_text", "get_dialect", "read_pcap", "to_arrow", "to_duckdb", "to_pandas", "to_polars", "to_text",
]

#: names served from the dataset package (pyarrow, pandas, DuckDB load only when one is used)
_DATASET = ("to_arrow", "to_duckdb", "to_pandas", "to_polars")
#: names served from the text package (its parser loads when one is used: ``read`` never does)
_TEXT = ("TextParseError", "from_text", "to_text")


def __getattr__(name: str):  # noqa: ANN202 - module __getattr__
    # read_pcap pulls in the capture, ENet and multiplayer readers: imported when first asked for
    if name == "read_pcap":
        from .pcap.reader import read_pcap

        return read_pcap
    if name in _TEXT:
        from . import text

        return getattr(text, name)
    if name in _DATASET:
        from . import dataset

        return getattr(dataset, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
