"""Imported once by the process pool's fork server, before it forks the workers: everything a
conversion needs is loaded and settled there, so a new worker starts converting at once."""

from __future__ import annotations

import gc

import pyarrow.csv  # noqa: F401 - loaded for the children
import pyarrow.parquet  # noqa: F401

from ..pcap import reader  # noqa: F401
from . import export  # noqa: F401
from .lean import pyarrow_without_pandas

pyarrow_without_pandas()
gc.freeze()  # shared with every forked worker, never walked by their collectors
