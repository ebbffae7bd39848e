"""Imported once by the process pool's fork server (when the pool cannot fork from the exporting
process itself), before it forks the workers: everything a conversion needs is loaded and settled
there, so a new worker starts converting at once."""

from __future__ import annotations

import gc

from .engines import load_modules
from .lean import pyarrow_without_pandas

load_modules()
pyarrow_without_pandas()
gc.freeze()  # shared with every forked worker, never walked by their collectors
