"""Only here to declare the optional C speedups; everything else is in pyproject.toml.

``optional=True``: without a working compiler the build is skipped with a warning and the
pure-Python codec is used (``godot_dissect.codec.fast`` finds no ``_speedups``).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("godot_dissect.codec._speedups", ["godot_dissect/codec/_speedups.c"], optional=True),
    ],
)
