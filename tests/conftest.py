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
    from gradviz import _warn
    gradviz.manual_seed(0)
    _warn._warned_once.clear()   # each test starts as a fresh process would: no warning shown yet
    yield


@pytest.fixture(params=["strict", "cupy"])
def cuda_namespace(request):
    """Device "cuda" backed by the strict stand-in for CuPy (tests/support/strict_namespace.py, on any
    machine) or by CuPy itself (marked gpu: where CuPy sees a CUDA GPU). The backend is restored after."""
    import gradviz
    from gradviz import backend
    if request.param == "cupy":
        request.applymarker(pytest.mark.gpu)
        pytest.importorskip("cupy", reason="CuPy is not installed (pip install 'gradviz[gpu]' on a CUDA machine)")
        if not gradviz.cuda.is_available():
            pytest.skip("no CUDA device visible to CuPy")
        yield backend.cupy()
        return
    from tests.support import strict_namespace
    saved = backend._cupy, backend._cupy_special
    backend._cupy, backend._cupy_special = strict_namespace.cupy, strict_namespace.special
    try:
        yield strict_namespace.cupy
    finally:
        backend._cupy, backend._cupy_special = saved
