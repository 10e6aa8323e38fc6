"""What ``import gravdir`` loads: no heavy SciPy submodule, no optional dependency, every public
name on first access."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import gravdir

#: Modules that ``import gravdir`` must not load: slow SciPy submodules and optional extras.
HEAVY = (
    "scipy.optimize",
    "scipy.stats",
    "scipy.signal",
    "scipy.spatial",
    "scipy.special",
    "scipy.interpolate",
    "matplotlib",
    "hypothesis",
)


def _loaded_after(code: str) -> dict[str, list[str]]:
    """Run `code` in a fresh interpreter; which of `HEAVY` (and their submodules) it loaded."""
    script = (
        "import json, sys\n"
        f"{code}\n"
        f"heavy = {HEAVY!r}\n"
        "print(json.dumps({h: sorted(m for m in sys.modules if m == h or m.startswith(h + '.'))"
        " for h in heavy}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    loaded: dict[str, list[str]] = json.loads(out.stdout.strip().splitlines()[-1])
    return loaded


def test_import_loads_no_heavy_module():
    loaded = _loaded_after("import gravdir")
    assert {h: m for h, m in loaded.items() if m} == {}


def test_import_loads_no_estimator_module():
    script = "import sys, gravdir\nprint(sorted(m for m in sys.modules if m.startswith('gravdir')))"
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    # Only the package and its import lock (gravdir._imports, a few lines over `threading`).
    assert out.stdout.split() == ["['gravdir',", "'gravdir._imports']"]


def test_resolving_every_public_name_loads_no_heavy_module():
    """The modules behind the public names import SciPy's slow submodules only inside the
    functions that use them."""
    loaded = _loaded_after(
        "import gravdir\nfor name in gravdir.__all__:\n    getattr(gravdir, name)"
    )
    assert {h: m for h, m in loaded.items() if m} == {}


def test_heavy_module_loads_when_first_needed():
    """A function that needs scipy.spatial.transform imports it on its first call."""
    loaded = _loaded_after(
        "import gravdir\nr = gravdir.rotation_from_up([0.0, 0.6, 0.8])\n"
        "assert type(r).__name__ == 'Rotation'"
    )
    assert loaded["scipy.spatial"] != []
    assert loaded["scipy.optimize"] == []


def test_rotation_is_accepted_once_scipy_spatial_is_loaded():
    """A SciPy ``Rotation`` is recognised without gravdir importing scipy.spatial for the test."""
    loaded = _loaded_after(
        "import numpy as np\n"
        "from scipy.spatial.transform import Rotation\n"
        "import gravdir\n"
        "r = Rotation.from_rotvec([0.0, 0.0, np.pi / 2])\n"
        "v = gravdir.vector_in_target_frame([1.0, 0.0, 0.0], r)\n"
        "w = gravdir.vector_in_target_frame([1.0, 0.0, 0.0], r.as_matrix())\n"
        "assert np.allclose(v, w), (v, w)\n"
    )
    assert loaded["scipy.optimize"] == []


@pytest.mark.parametrize("name", gravdir.__all__)
def test_every_public_name_resolves(name):
    obj = getattr(gravdir, name)
    assert obj is not None
    assert name in dir(gravdir)
    namespace: dict[str, object] = {}
    exec(f"from gravdir import {name}", namespace)
    assert namespace[name] is obj


def test_all_is_unique():
    assert len(gravdir.__all__) == len(set(gravdir.__all__))
    assert "__version__" not in gravdir.__all__


def test_unknown_attribute_raises_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'fit_sweeps'"):
        gravdir.fit_sweeps  # noqa: B018
    assert not hasattr(gravdir, "_no_such_module")


def test_subpackages_import_on_first_access():
    script = (
        "import gravdir\n"
        "assert gravdir.sweep.fit_sweep is gravdir.fit_sweep\n"
        "assert gravdir.frames.__name__ == 'gravdir.frames'\n"
        "print('ok')"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "ok"
