"""The one check of a whole-number setting (a count, a size limit, a batch) that components make when built.

Usage:
```python
self.num_results = positive_int("num_results", num_results)
```
"""

from __future__ import annotations

from typing import Any


def positive_int(name: str, value: Any) -> int:
    """`value` if it is a whole number of at least 1 (a bool is not one); ValueError naming `name` otherwise."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive integer, not {value!r}")
    return value
