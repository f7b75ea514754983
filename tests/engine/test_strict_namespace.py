"""The strict stand-in for CuPy behaves as CuPy did where CuPy was read on a GPU
(tests/support/data/cupy_surface.json, written by tests/support/cupy_surface.py)."""
import pytest

from tests.support import cupy_surface
from tests.support import strict_namespace

# where the stand-in is stricter than CuPy, on purpose
STRICTER = {
    "cupy function of a numpy array": "CuPy hands a NumPy array to NumPy and computes on the host; the stand-in "
                                      "refuses it, so that host work is always explicit",
}


def _kind(outcome: str) -> str:
    """'ok ndarray' / 'ok float' / 'error TypeError': the outcome without modules and messages."""
    status, rest = outcome.split(" ", 1)
    return f"{status} {rest.split(':')[0].rsplit('.', 1)[-1]}"


@pytest.mark.parametrize("what", sorted(cupy_surface.MANNERS))
def test_the_stand_in_has_cupys_manners(what):
    recorded = strict_namespace.SURFACE["manners"][what]
    ours = cupy_surface.outcome(cupy_surface.MANNERS[what], strict_namespace.cupy)
    if what in STRICTER:
        assert recorded.startswith("ok") and ours.startswith("error TypeError"), (recorded, ours)
    else:
        assert _kind(ours) == _kind(recorded), f"CuPy: {recorded}\n  stand-in: {ours}"


def test_the_stand_in_offers_only_cupys_names():
    cupy = strict_namespace.cupy
    assert cupy.exp is not None and cupy.linalg.solve is not None
    for missing in ("frompyfunc", "errstate"):   # NumPy has them, CuPy 14 does not
        with pytest.raises(AttributeError):
            getattr(cupy, missing)
    with pytest.raises(NotImplementedError, match="accumulate"):
        cupy.logaddexp.accumulate(cupy.arange(3.0))
    with pytest.raises(TypeError, match="sparse"):
        cupy.indices((2, 3), sparse=True)
