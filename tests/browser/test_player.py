"""The saved HTML player in a real Chromium: keys, buttons, and no request leaving the page."""
import html as htmllib
import re

import numpy as np
import pytest

import gradviz as torch
from gradviz import formatting
from gradviz.player import animate

from tests.support.browser_support import chromium

pytestmark = pytest.mark.browser


def grid_text(preview) -> str:
    """A small tensor as the panel's grid reads in the page: its numbers in order."""
    return " ".join(formatting.number(v) for v in np.ravel(preview.values))


def squeeze(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def recorded():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, -1.0], requires_grad=True)
    a.name, b.name = "a", "b"
    loss = ((a * b).exp() + a).sum()
    return animate(loss, forward=False, names={"loss": loss}), a, b


@pytest.fixture(scope="module")
def browser():
    with chromium() as context:
        yield context


def test_keys_and_next_reach_step_4_of_the_recorded_trace(tmp_path, browser):
    anim, a, b = recorded()
    assert len(anim.steps) >= 6
    path = anim.save(tmp_path / "backward.html")
    step = anim.steps[4]
    node = anim.trace.node(step.node)
    page = browser.new_page()
    requests, errors = [], []
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    player = page.locator(".gv-player")
    player.wait_for()
    assert player.get_attribute("data-frame") == "0"
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    assert player.get_attribute("data-frame") == "3"
    page.click(".gv-next")
    assert player.get_attribute("data-frame") == "4"

    active = page.eval_on_selector_all(".gv-stage g.node.gv-active", "els => els.map(e => e.id)")
    assert active == [step.node]
    assert player.get_attribute("data-node") == step.node
    flowing = set(page.eval_on_selector_all(".gv-stage g.edge.gv-flowing", "els => els.map(e => e.id)"))
    assert {edge_id for edge_id, _, _ in step.flows} <= flowing

    title = squeeze(page.inner_text(".gv-title"))
    text = squeeze(page.inner_text(".gv-text"))
    assert title == htmllib.unescape(anim.frames[4].title)
    assert title.startswith(f"backward 5/{len(anim.steps)} ·")
    expected_name = "AccumulateGrad" if node.kind == "accumulate" else node.name
    assert expected_name in text
    for acc in step.accumulations:          # what AccumulateGrad wrote, with its values
        leaf = anim.trace.node(acc.node)
        assert f"{leaf.name}.grad" in text
        assert grid_text(acc.total) in text
    for _, grad, _ in step.flows:           # what the VJP sent along each edge
        assert grid_text(grad) in text
    labels = page.eval_on_selector_all(".gv-stage g.gv-labels text", "els => els.map(e => e.textContent)")
    assert sorted(labels) == sorted(anim.frames[4].labels.values())

    # back with ←, then the slider and play at 4× speed
    page.keyboard.press("ArrowLeft")
    assert player.get_attribute("data-frame") == "3"
    page.select_option(".gv-speed", "4")
    page.click(".gv-play")
    page.wait_for_function("document.querySelector('.gv-player').dataset.frame === '5'", timeout=5000)
    page.click(".gv-play")                  # pause
    page.locator(".gv-slider").fill("1")
    assert player.get_attribute("data-frame") == "1"

    assert not errors, errors
    left = [u for u in requests if not u.startswith(("file:", "data:"))]
    assert not left, left
    assert requests and requests[0].startswith("file:")


def test_two_players_on_one_page_are_independent(tmp_path, browser):
    """Notebook outputs put several players (with the same SVG ids) on one page."""
    first, _, _ = recorded()
    second, _, _ = recorded()
    page_path = tmp_path / "two.html"
    page_path.write_text("<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>"
                         f"{first._repr_html_()}{second._repr_html_()}</body></html>", encoding="utf-8")
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(page_path.as_uri())
    players = page.locator(".gv-player")
    assert players.count() == 2
    players.nth(1).locator(".gv-next").click()
    assert players.nth(0).get_attribute("data-frame") == "0"
    assert players.nth(1).get_attribute("data-frame") == "1"
    page.keyboard.press("ArrowRight")          # focus is inside the second player
    assert players.nth(0).get_attribute("data-frame") == "0"
    assert players.nth(1).get_attribute("data-frame") == "2"
    active = players.nth(1).evaluate("p => [...p.querySelectorAll('g.node.gv-active')].map(g => g.id)")
    assert active == [second.steps[2].node]
    assert players.nth(0).evaluate("p => [...p.querySelectorAll('g.node.gv-active')].map(g => g.id)") == \
        [first.steps[0].node]
    assert not errors, errors


def test_nodes_a_create_graph_backward_built_say_so_and_are_counted_by_their_pass(tmp_path, browser):
    """A node of order 1 is titled by the pass that made it ("first backward (create_graph) 1/3") and
    the counter beside says the same pass and count; the backward's count starts after."""
    x = torch.tensor([0.5, -1.0], requires_grad=True)
    (g,) = torch.autograd.grad(x.sin().tanh().sum(), x, create_graph=True)
    anim = animate(g.sum())
    building = [f for f in anim.frames if f.phase == "forward"]
    assert any(f.title.startswith("first backward (create_graph) ") for f in building)
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(anim.save(tmp_path / "double.html").as_uri())
    player = page.locator(".gv-player")
    player.wait_for()
    for k, frame in enumerate(anim.frames):
        if k:
            page.keyboard.press("ArrowRight")
        assert player.get_attribute("data-frame") == str(k)
        title = squeeze(page.inner_text(".gv-title"))
        count = page.inner_text(".gv-count")
        if k < len(building):
            assert title == squeeze(htmllib.unescape(frame.title))
            made_by = "forward" if title.startswith("forward") else "first backward (create_graph)"
            same = [f for f in building if f.title.startswith(made_by)]
            assert title.startswith(f"{made_by} {same.index(frame) + 1}/{len(same)} · ")
            assert count == f"{made_by} {same.index(frame) + 1} of {len(same)}", title
        else:
            assert count == f"backward {k - len(building) + 1} of {len(anim.frames) - len(building)}", title
    assert not errors
    page.close()
