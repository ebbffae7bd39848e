"""Start-up of the export processes. pyarrow imports numpy with itself when numpy is installed
(about 0.1 s), cloudpickle (for pickling extension types; 10 ms), and pandas (about half a second)
and dateutil when it builds its first array, to check whether the data is a pandas object. A
conversion needs none of them: it hands pyarrow Python lists only, and pickles no Arrow type."""

from __future__ import annotations

import sys
from typing import Any


class _Without:
    """A meta path finder that answers "no such module" for some installed packages."""

    def __init__(self, *names: str) -> None:
        self.names = names

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


def pyarrow_without_pandas() -> None:
    """Make this process's pyarrow settle on "no pandas" (call it before pyarrow builds an array;
    only in processes of our own: afterwards pyarrow's own pandas conversions are unavailable)."""
    if "pandas" in sys.modules:
        return
    import pyarrow as pa

    finder = _Without("pandas", "dateutil")
    sys.meta_path.insert(0, finder)  # type: ignore[arg-type]
    try:
        pa.array([0])  # pyarrow's pandas shim tries once and remembers
    finally:
        sys.meta_path.remove(finder)  # type: ignore[arg-type]


def pyarrow_without_numpy() -> None:
    """Import pyarrow as if numpy were not installed, then settle it on "no pandas" (call it before
    anything imports pyarrow, in processes of our own that only convert captures: pyarrow's numpy
    conversions are unavailable afterwards; numpy itself still imports for whoever wants it)."""
    if "pyarrow" not in sys.modules and "numpy" not in sys.modules:
        finder = _Without("numpy", "cloudpickle")
        sys.meta_path.insert(0, finder)  # type: ignore[arg-type]
        try:
            import pyarrow  # noqa: F401
        finally:
            sys.meta_path.remove(finder)  # type: ignore[arg-type]
    pyarrow_without_pandas()
