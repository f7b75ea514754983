"""nn.Buffer against torch's: assigned to a Module it is registered as a buffer (persistent or not),
isinstance(t, nn.Buffer) holds for the tensor it returns, and the refusals are torch's."""
import contextlib
import io

from tests.support.parity import needs_torch, real_torch

import gradviz

pytestmark = needs_torch

PROGRAM = """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.mask = nn.Buffer(torch.tril(torch.ones(2, 2)))
        self.cache = nn.Buffer(torch.zeros(2), persistent=False)
        self.plain = torch.ones(1)
m = M()
print(list(m.state_dict()), [n for n, _ in m.named_buffers()], type(m.mask).__name__, isinstance(m.mask, nn.Buffer))
print(isinstance(torch.ones(1), nn.Buffer), isinstance(m.plain, nn.Buffer), m.mask.persistent, m.cache.persistent)
m.mask = torch.zeros(2, 2)
m.cache = torch.ones(2)
print(m.mask, list(m.state_dict()), m.cache)
b = nn.Buffer(torch.ones(2, requires_grad=True))
print(b, b.requires_grad, b.is_leaf, nn.Buffer())
try:
    m.mask = [1, 2]
except TypeError as e:
    print(e)
class N(nn.Module):
    def __init__(self):
        self.b = nn.Buffer(torch.ones(1))
try:
    N()
except AttributeError as e:
    print(e)
try:
    m.plain = nn.Buffer(torch.ones(1))
except KeyError as e:
    print("KeyError", e)
print(m.to(torch.float64).mask.dtype, m.mask is m._buffers["mask"])
"""


def output(torch) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(PROGRAM, {"torch": torch, "nn": torch.nn})
    return out.getvalue()


def test_buffer_matches_torch():
    assert output(gradviz) == output(real_torch)
