"""The order of the examples on the gallery's index: the order the site's navigation had before
the gallery (the quickstart first, the fleet last); an example not listed comes after them."""

from __future__ import annotations

ORDER = [
    "quickstart.py",
    "walkthrough.py",
    "general_estimator.py",
    "touch_plane.py",
    "kinematic_error.py",
    "friction.py",
    "ordinary_motion.py",
    "long_logs.py",
    "plots.py",
    "fleet.py",
]


class NavigationOrder:
    """sphinx-gallery's sort key (``within_subsection_order``), by position in ``ORDER``."""

    def __init__(self, src_dir: str) -> None:
        self.src_dir = src_dir

    def __call__(self, filename: str) -> tuple[int, str]:
        rank = ORDER.index(filename) if filename in ORDER else len(ORDER)
        return rank, filename

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"
