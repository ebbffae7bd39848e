"""Only here to declare the optional C speedups; everything else is in pyproject.toml.

``optional=True``: without a working compiler the build is skipped with a warning and the
pure-Python codec is used (``godot_dissect.codec.fast`` finds no ``_speedups``).
One extension, two files: the codec (``_speedups.c``) and the text/JSON writers (``_render.c``).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("godot_dissect.codec._speedups",
                  ["godot_dissect/codec/_speedups.c", "godot_dissect/codec/_render.c"],
                  depends=["godot_dissect/codec/_speedups.h"], optional=True),
    ],
)
