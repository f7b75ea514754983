"""Test-wide set-up: nothing lands in $HOME, and PyTorch is optional."""
import os
import tempfile

import pytest

_home = tempfile.mkdtemp(prefix="gradviz-test-home-")
for var in ("HOME", "IPYTHONDIR", "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR",
            "MPLCONFIGDIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
    os.environ[var] = os.path.join(_home, var.lower()) if var != "HOME" else _home


@pytest.fixture(autouse=True)
def _seed():
    import gradviz
    gradviz.manual_seed(0)
    yield
