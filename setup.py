"""Only here to declare the optional C speedups; everything else is in pyproject.toml.

``optional=True``: without a working compiler the build is skipped with a warning and the
pure-Python codec is used (``godot_dissect.codec.fast`` finds no ``_speedups``).
The codec extension has two files: the codec (``_speedups.c``) and the text/JSON writers
(``_render.c``); ``pcap/_packets.c`` parses Ethernet/IPv4/UDP/TCP headers for ``pcap/packets.py``;
``pcap/_stream.c`` is the reader's in-order TCP step (``pcap/inorder.py``); ``enet/_rangecoder.c`` is
ENet's range coder decompressor for ``enet/rangecoder.py``.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("godot_dissect.codec._speedups",
                  ["godot_dissect/codec/_speedups.c", "godot_dissect/codec/_render.c"],
                  depends=["godot_dissect/codec/_speedups.h"], optional=True),
        Extension("godot_dissect.pcap._packets", ["godot_dissect/pcap/_packets.c"], optional=True),
        Extension("godot_dissect.pcap._stream", ["godot_dissect/pcap/_stream.c"], optional=True),
        Extension("godot_dissect.enet._rangecoder", ["godot_dissect/enet/_rangecoder.c"], optional=True),
    ],
)
