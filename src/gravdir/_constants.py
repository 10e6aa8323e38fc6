"""Physical constants shared by every module."""

from __future__ import annotations

from typing import Final

__all__ = ["STANDARD_GRAVITY"]

#: Standard acceleration of gravity, m/s² (exact by definition; BIPM, *The International System of
#: Units*, 9th ed., 2019). The default of every `gravity` argument.
STANDARD_GRAVITY: Final[float] = 9.80665
