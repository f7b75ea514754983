"""gradviz.func keeps the structure of what f returns: a torch.return_types-like tuple stays one."""
import numpy as np

import gradviz
from tests.support.parity import needs_torch, real_torch


@needs_torch
def test_jvp_of_a_values_indices_result_keeps_its_type():
    torch = real_torch
    data = np.array([[0.3, -1.0, 2.0, 0.5], [1.5, 0.2, -0.7, 3.0]])
    want = torch.func.jvp(lambda x: torch.cummax(x, 1), (torch.from_numpy(data),),
                          (torch.ones(2, 4, dtype=torch.float64),))
    got = gradviz.func.jvp(lambda x: gradviz.cummax(x, 1), (gradviz.from_numpy(data.copy()),),
                           (gradviz.ones(2, 4, dtype=gradviz.float64),))
    plain = gradviz.cummax(gradviz.from_numpy(data.copy()), 1)
    for g, w in zip(got, want):
        assert type(g) is type(plain) and g._name == plain._name   # what cummax itself returns
        np.testing.assert_array_equal(g.values.numpy(), w.values.numpy())
        np.testing.assert_array_equal(g.indices.numpy(), w.indices.numpy())
