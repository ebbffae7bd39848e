"""Imported once by the process pool's fork server (when the pool cannot fork from the exporting
process itself), before it forks the workers: everything a conversion needs is loaded and settled
there, so a new worker starts converting at once."""

from __future__ import annotations

import gc

from .lean import pyarrow_without_numpy

pyarrow_without_numpy()  # before anything imports pyarrow

from .engines import load_modules  # noqa: E402

load_modules()
gc.freeze()  # shared with every forked worker, never walked by their collectors
