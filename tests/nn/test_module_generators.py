"""Module's walks (parameters, named_parameters, buffers, children, modules, ...) are generator
functions, as torch's: print(model.parameters()) shows <generator object Module.parameters at 0x…>."""
import pytest

import gradviz
from tests.support.parity import needs_torch, same_output

WALKS = ["parameters", "named_parameters", "buffers", "named_buffers", "children", "named_children", "modules",
         "named_modules"]


@pytest.mark.parametrize("walk", WALKS)
def test_a_walk_prints_as_a_generator_of_module(walk):
    model = gradviz.nn.Sequential(gradviz.nn.Linear(2, 3), gradviz.nn.BatchNorm1d(3))
    assert repr(getattr(model, walk)()).startswith(f"<generator object Module.{walk} at 0x")


@needs_torch
def test_walks_print_and_yield_as_torch():
    same_output("""
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = torch.nn.Linear(2, 3)
                self.b = torch.nn.BatchNorm1d(3)
                self.shared = self.a
        net = Net()
        """, *[f"""
        print(net.{walk}())
        print([n if isinstance(n, str) else type(n).__name__ for item in net.{walk}()
               for n in (item if isinstance(item, tuple) else (item,))])
        """ for walk in WALKS], """
        print(len(list(net.parameters(recurse=False))), len(list(net.named_parameters(prefix="p"))))
        print([n for n, _ in net.named_modules(prefix="root")], [n for n, _ in net.named_buffers(remove_duplicate=False)])
    """)
