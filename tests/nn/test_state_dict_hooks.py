"""A module's state as torch's: extra state (get_extra_state/set_extra_state), each module's _version
in state_dict()._metadata, the state_dict and load_state_dict pre- and post-hooks, and a module that
overrides _load_from_state_dict to read an older checkpoint's keys."""
import pytest

from tests.support.parity import needs_torch, same_output

pytestmark = [pytest.mark.torch, needs_torch]

SCALER = """
torch.manual_seed(0)
class Scaler(torch.nn.Module):
    _version = 2
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(2, 2)
        self.scale = 3.0
    def get_extra_state(self):
        return {"scale": self.scale}
    def set_extra_state(self, state):
        self.scale = state["scale"]
m = Scaler()
sd = m.state_dict()
"""


def test_extra_state_and_versions():
    same_output(SCALER, """
    print(list(sd.keys()), sd["_extra_state"], sd._metadata)
    m2 = Scaler()
    m2.scale = 1.0
    print(m2.load_state_dict(sd), m2.scale)
    del sd["_extra_state"]
    print(m2.load_state_dict(sd, strict=False))
    try:
        m2.load_state_dict(sd)
    except RuntimeError as e:
        print(e)
    try:
        torch.nn.Linear(2, 2).load_state_dict({"weight": torch.ones(2, 2), "bias": torch.ones(2), "_extra_state": 1})
    except RuntimeError as e:
        print(e)
    print(torch.nn.Sequential(torch.nn.Linear(1, 1)).state_dict()._metadata)
    """)


def test_state_dict_and_load_hooks():
    same_output(SCALER, """
    calls = []
    m.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: calls.append(("pre", prefix, keep_vars)))
    h = m.register_state_dict_post_hook(lambda mod, d, prefix, meta: calls.append(("post", sorted(d), meta)))
    print(sorted(m.state_dict(prefix="model.", keep_vars=True)), calls)
    h.remove()
    m.register_state_dict_post_hook(lambda mod, d, prefix, meta: {})
    try:
        m.state_dict()
    except RuntimeError as e:
        print(e)
    m2 = Scaler()
    m2.register_load_state_dict_pre_hook(
        lambda mod, d, prefix, meta, strict, missing, unexpected, errors: calls.append(("load pre", sorted(d), meta)))
    m2.lin.register_load_state_dict_post_hook(lambda mod, keys: keys.missing_keys.append("made.up"))
    print(m2.load_state_dict(sd, strict=False), calls[-1])
    """)


def test_a_module_reading_an_older_checkpoint():
    same_output("""
    class Old(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.zeros(2))
        def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                  error_msgs):
            if local_metadata.get("version", 1) < 2 and prefix + "w" in state_dict:
                state_dict[prefix + "weight"] = state_dict.pop(prefix + "w")
            super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                          error_msgs)
    o = Old()
    print(o.load_state_dict({"w": torch.ones(2)}), o.weight)
    wrapper = torch.nn.Sequential(Old())
    print(wrapper.load_state_dict({"0.w": torch.full((2,), 2.0)}), wrapper[0].weight)
    b = torch.nn.BatchNorm1d(2)
    print(b.load_state_dict({"weight": torch.ones(2), "bias": torch.zeros(2), "running_mean": torch.zeros(2),
                             "running_var": torch.ones(2), "num_batches_tracked": torch.tensor([5])}),
          b.num_batches_tracked)
    c = torch.nn.BatchNorm1d(2)
    print(c.state_dict()._metadata, c.load_state_dict({"weight": torch.ones(2), "bias": torch.zeros(2),
                                                       "running_mean": torch.zeros(2), "running_var": torch.ones(2)}))
    new = c.state_dict()
    del new["num_batches_tracked"]
    try:
        c.load_state_dict(new)
    except RuntimeError as e:
        print(e)
    i = torch.nn.InstanceNorm1d(2)
    try:
        i.load_state_dict({"running_mean": torch.zeros(2), "running_var": torch.ones(2)})
    except RuntimeError as e:
        print(e)
    print(i.load_state_dict(i.state_dict()))
    """)

