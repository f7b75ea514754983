"""Predict mode in a saved player, in Chromium at 1280×720, light and dark: with "predict" on, a backward
step waits for the learner's prediction of what its node sends; a wrong value is rejected with the
checkers' grid (your answer, the engine's, the difference marked where wrong) and the step stays
hidden; a wrong shape is named; the right value is accepted and the step is then shown. The answers
are the Trace's own (player/predict.py)."""
import re

import pytest

import gradviz as torch
from gradviz.player.predict import payload
from tests.support.browser_support import chromium, require_browser

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    x = torch.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
    b = torch.tensor([0.5, -1., 2.], requires_grad=True)
    h = x * b
    loss = (h * h).sum()
    anim = torch.animate(loss, names={"x": x, "b": b, "h": h, "loss": loss}, forward=False)
    path = tmp_path_factory.mktemp("predict") / "player.html"
    anim.save(path)
    return path, payload(anim.trace)


def typed(values) -> str:
    return " ".join(repr(float(v)) for v in values)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_predict_mode_checks_the_learner_against_the_trace(saved, scheme):
    require_browser()
    path, answers = saved
    with chromium((1280, 720)) as browser:
        page = browser.new_page()
        page.emulate_media(color_scheme=scheme)
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(path.as_uri())
        page.wait_for_load_state("networkidle")
        count = page.inner_text(".gv-count")
        page.click(".gv-predict")
        page.click(".gv-next")
        page.locator(".gv-ask").wait_for()
        assert page.inner_text(".gv-count") == count, "the step waits for the prediction"
        k = re.search(r"Predict step (\d+): what does (.+) send\?", page.inner_text(".gv-ask"))
        want = answers[k.group(1)]
        assert k.group(2) == want["node"]
        inputs = page.locator(".gv-ask-in")
        assert inputs.count() == len(want["sends"])

        for i, sent in enumerate(want["sends"]):      # the first one wrong in one place, the others right
            values = list(sent["values"])
            if i == 0:
                values[-1] += 1
            inputs.nth(i).fill(typed(values))
        page.click(".gv-ask-check")
        verdicts = page.locator(".gv-ask-verdict")
        assert verdicts.nth(0).inner_text().startswith(f"✗ 1 of {len(want['sends'][0]['values'])} values differ")
        assert page.locator(".gv-ask .gv-vjp-table td.gv-ask-wrong").count() == 1, "the wrong cell marked"
        assert page.inner_text(".gv-count") == count, "a wrong answer does not show the step"

        page.click(".gv-next")                        # Next again: the question stays, with what was typed
        assert page.inner_text(".gv-count") == count and inputs.nth(1).input_value() != ""

        inputs.nth(0).fill("1 2")
        page.click(".gv-ask-check")
        assert "a gradient always has the shape of its tensor" in verdicts.nth(0).inner_text()

        inputs.nth(0).fill(typed(want["sends"][0]["values"]))
        page.click(".gv-ask-check")
        assert all(verdicts.nth(i).inner_text().startswith("✓ right") for i in range(len(want["sends"])))
        page.screenshot(path=str(path.with_name(f"predict-{scheme}.png")))
        page.click(".gv-ask-show")
        assert page.inner_text(".gv-count") != count and not page.is_visible(".gv-ask"), "then the step is shown"
        assert errors == []
