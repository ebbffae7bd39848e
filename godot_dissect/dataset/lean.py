"""Start-up of the export processes: pyarrow imports pandas (about half a second) when it builds
its first array, to check whether the data is a pandas object. Export never hands it one."""

from __future__ import annotations

import sys
from typing import Any


class _NoPandas:
    """A meta path finder that answers "no such module" for pandas, while it is installed."""

    @staticmethod
    def find_spec(name: str, path: Any = None, target: Any = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


def pyarrow_without_pandas() -> None:
    """Make this process's pyarrow settle on "no pandas" (call it before pyarrow builds an array;
    only in processes of our own: afterwards pyarrow's own pandas conversions are unavailable)."""
    if "pandas" in sys.modules:
        return
    import pyarrow as pa

    finder = _NoPandas()
    sys.meta_path.insert(0, finder)  # type: ignore[arg-type]
    try:
        pa.array([0])  # pyarrow's pandas shim tries once and remembers
    finally:
        sys.meta_path.remove(finder)  # type: ignore[arg-type]
