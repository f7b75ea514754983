"""A folded box opened in place, find, and a 20,000-node page, in Chromium at two sizes, light and dark."""
import html as htmllib
import os
import re

import pytest

import gradviz
from gradviz.player import animate
from gradviz.player.inside import expand

from tests.player.test_open_box import gpt
from tests.support.browser_support import chromium
from tests.support.player_checks import SEE_STEP

pytestmark = pytest.mark.browser

SIZES = [(1280, 720), (1400, 900)]
SCHEMES = ["light", "dark"]
SHOTS = os.environ.get("GRADVIZ_SCREENSHOTS")     # a folder to keep the screenshots in, to look at them


def squeeze(text: str) -> str:
    return re.sub(r"\s+", " ", htmllib.unescape(re.sub(r"<[^>]+>", " ", text))).strip()


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """The pages, built once: a 12-layer GPT folded block by block, and a 20,000-node chain."""
    folder = tmp_path_factory.mktemp("open-box")
    loss, params = gpt(12)
    blocks = animate(loss, names=params, collapse=[f"{i} (Block)" for i in range(12)])
    gradviz.manual_seed(0)
    x = gradviz.randn(4, requires_grad=True)
    y = x
    for _ in range(19_997):
        y = y * 1.001
    big = animate(y.sum(), forward=False, jacobians=False)
    assert len(big.trace.nodes) >= 20_000
    return {"gpt": (blocks, blocks.save(folder / "gpt.html")), "big": (big, big.save(folder / "big.html"))}


@pytest.fixture(scope="module")
def browser():
    with chromium() as context:
        yield context


def shot(page, name: str) -> None:
    if SHOTS:
        os.makedirs(SHOTS, exist_ok=True)
        page.screenshot(path=os.path.join(SHOTS, name + ".png"))


def open_page(browser, path, size, scheme):
    page = browser.new_page()
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.emulate_media(color_scheme=scheme)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    page.wait_for_function("() => { const r = document.querySelector('.gv-player'); return r && r.__gv; }")
    return page, errors


def settle(page) -> None:
    """Wait for the camera of the layout on screen to stop gliding."""
    page.wait_for_function("() => !document.querySelector('.gv-player').__gv.view().camera.moving()")


def inside_rect(page, selector: str) -> bool:
    """Whether the element's centre lies inside the shown stage (an opened box's, or the graph's)."""
    return page.evaluate("""(sel) => {
        const el = document.querySelector(sel), st = document.querySelector('.gv-stage.gv-inset:not([hidden])')
                   || document.querySelector('.gv-stage');
        if (!el) return false;
        const r = el.getBoundingClientRect(), s = st.getBoundingClientRect(), x = r.x + r.width / 2, y = r.y + r.height / 2;
        return x > s.left && x < s.right && y > s.top && y < s.bottom;
    }""", selector)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_open_a_box_step_inside_and_close_it(pages, browser, size, scheme):
    anim, path = pages["gpt"]
    k = next(i for i, f in enumerate(anim.frames) if f.inner and f.phase == "backward")
    folded = anim.frames[k]
    inside = anim.inside.frames[folded.inner[0]:folded.inner[1]]
    total = len(anim.trace.steps)
    box = anim.inside.boxes[folded.node]["title"]
    page, errors = open_page(browser, path, size, scheme)
    root = page.locator(".gv-player")
    page.evaluate(f"document.querySelector('.gv-player').__gv.go({k})")
    count = root.locator(".gv-count")
    assert count.inner_text() == f"backward {folded.span[0]}–{folded.span[1]} of {total}"
    assert squeeze(root.locator(".gv-title").inner_html()) == squeeze(folded.title)
    opener = root.locator(".gv-open")
    assert opener.is_visible() and opener.inner_text() == "open box"
    shot(page, f"box-{size[0]}-{scheme}-folded")
    opener.click()
    for j in range(4):
        if j:
            page.keyboard.press("ArrowRight")
        f = inside[j]
        # the step inside is the unfolded player's: its counter, title, node and lit nodes
        assert count.inner_text() == f"backward {f.span[0]} of {total} · in {box}"
        assert squeeze(root.locator(".gv-title").inner_html()) == squeeze(f.title)
        assert root.get_attribute("data-node") == f.node
        active = page.eval_on_selector_all(".gv-inset:not([hidden]) g.node.gv-active", "els => els.map(e => e.id)")
        assert active == [f.node]
        settle(page)
        assert inside_rect(page, f".gv-inset:not([hidden]) g.node[id='{f.node}']")   # the camera follows
    assert root.locator(".gv-inset").is_visible() and not root.locator(".gv-stage:not(.gv-inset)").is_visible()
    assert page.evaluate("document.querySelector('.gv-player').__gv.opened().k") == 3
    shot(page, f"box-{size[0]}-{scheme}-inside")
    page.keyboard.press("Escape")
    assert not root.locator(".gv-inset").is_visible()
    assert count.inner_text() == f"backward {folded.span[0]}–{folded.span[1]} of {total}"
    assert root.get_attribute("data-frame") == str(k) and root.get_attribute("data-node") == folded.node
    # Next at the last step inside goes on to the frame after the box
    page.evaluate("document.querySelector('.gv-player').__gv.open(-1)")
    assert count.inner_text() == f"backward {inside[-1].span[0]} of {total} · in {box}"
    page.keyboard.press("ArrowRight")
    assert root.get_attribute("data-frame") == str(k + 1) and not root.locator(".gv-inset").is_visible()
    assert errors == []
    page.close()



@pytest.mark.parametrize("size", SIZES)
def test_find_opens_the_box_at_the_step_that_writes_the_parameter_and_the_camera_follows_on(pages, browser, size):
    """Found in a box, a parameter is shown at the step inside that writes its .grad (not the box's first
    step, whose node lies elsewhere), and the learner's next step is on screen: find does not stop following."""
    anim, path = pages["gpt"]
    node, box = next((n, b) for text, n, b in expand(anim.inside.names) if text == "transformer.h.7.attn.c_attn.weight")
    k = next(i for i, f in enumerate(anim.frames) if f.node == box and f.inner and f.phase == "backward")
    inside = anim.inside.frames[anim.frames[k].inner[0]:anim.frames[k].inner[1]]
    j = next(j for j, f in enumerate(inside) if f.node == node or f.changes.get(node) in ("active", "written"))
    assert j > 0
    page, errors = open_page(browser, path, size, "light")
    root = page.locator(".gv-player")
    page.keyboard.press("/")
    page.keyboard.type("h.7.attn.c_attn.weight")
    page.keyboard.press("Enter")
    assert page.evaluate("document.querySelector('.gv-player').__gv.opened().k") == j
    title = anim.inside.boxes[box]["title"]
    assert root.locator(".gv-count").inner_text() == f"backward {inside[j].span[0]} of {len(anim.trace.steps)} · in {title}"
    settle(page)
    assert inside_rect(page, f".gv-inset:not([hidden]) g.node[id='{node}']")   # the parameter is shown
    page.keyboard.press("Escape")          # out of the find box; the box stays open
    assert page.evaluate("document.querySelector('.gv-player').__gv.opened().k") == j
    for step in range(3):
        page.keyboard.press("ArrowRight")
        settle(page)
        seen = page.evaluate("(" + SEE_STEP + ")(document.querySelector('.gv-player'))")
        assert seen["node"] == inside[j + 1 + step].node
        assert seen["inStage"] and seen["onScreen"] and seen["unobstructed"], seen
    assert errors == []
    page.close()


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_a_parameter_found_in_a_box_is_shown_with_the_step_that_writes_it(pages, browser, size, scheme):
    """Where both fit at a readable size, the camera shows the found parameter and the AccumulateGrad its
    step runs, so the frame on screen passes the check every step passes."""
    anim, path = pages["gpt"]
    node = next(n for text, n, b in expand(anim.inside.names) if text == "transformer.h.7.mlp.c_fc.weight")
    page, errors = open_page(browser, path, size, scheme)
    page.keyboard.press("/")
    page.keyboard.type("h.7.mlp.c_fc.weight")
    page.keyboard.press("Enter")
    settle(page)
    seen = page.evaluate("(" + SEE_STEP + ")(document.querySelector('.gv-player'))")
    assert seen["node"] != node and seen["keyInView"], seen        # the AccumulateGrad writing its .grad
    assert seen["inStage"] and seen["onScreen"] and seen["unobstructed"], seen
    assert inside_rect(page, f".gv-inset:not([hidden]) g.node[id='{node}']")
    assert errors == []
    page.close()

@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_find_opens_the_box_that_holds_a_parameter_and_centres_it(pages, browser, size, scheme):
    anim, path = pages["gpt"]
    node, box = next((n, b) for text, n, b in expand(anim.inside.names) if text == "transformer.h.7.attn.c_attn.weight")
    page, errors = open_page(browser, path, size, scheme)
    root = page.locator(".gv-player")
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.classList.contains('gv-find')")
    page.keyboard.type("h.7.attn.c_attn.weight")
    page.keyboard.press("Enter")
    assert page.evaluate("document.querySelector('.gv-player').__gv.opened().box") == box
    hit = f".gv-inset:not([hidden]) g.node[id='{node}']"
    assert page.locator(hit).get_attribute("class").split().count("gv-hit") == 1
    settle(page)
    assert inside_rect(page, hit)
    assert root.locator(".gv-found").inner_text() == "1 of 1: transformer.h.7.attn.c_attn.weight (in 7 (Block))"
    shot(page, f"find-{size[0]}-{scheme}")
    # a node type: every match in turn, Enter for the next
    page.fill(".gv-find", "GeluBackward0")
    page.keyboard.press("Enter")
    assert root.locator(".gv-found").inner_text().startswith("1 of 12: GeluBackward0")
    page.keyboard.press("Enter")
    assert root.locator(".gv-found").inner_text().startswith("2 of 12: GeluBackward0")
    page.fill(".gv-find", "no such thing")
    page.keyboard.press("Enter")
    assert root.locator(".gv-found").inner_text() == "not found"
    assert errors == []
    page.close()


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_a_20000_node_page_opens_and_steps(pages, browser, size, scheme):
    anim, path = pages["big"]
    page, errors = open_page(browser, path, size, scheme)
    root = page.locator(".gv-player")
    n = len(anim.frames)
    for k in range(1, min(n, 6)):
        page.keyboard.press("ArrowRight")
        assert root.get_attribute("data-frame") == str(k)
        f = anim.frames[k]
        assert squeeze(root.locator(".gv-title").inner_html()) == squeeze(f.title)
    page.keyboard.press("End")
    assert root.get_attribute("data-frame") == str(n - 1)
    assert root.locator(".gv-count").inner_text() == f"backward {len(anim.steps)} of {len(anim.steps)}"
    shot(page, f"big-{size[0]}-{scheme}")
    assert errors == []
    page.close()


# The Stepper's own module (its _esm) on a page, given a stand-in for anywidget's model that holds the
# widget's traits as Python left them: the same script, the same bridge, no kernel.
STEPPER_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"></head><body><div id="out"></div>
<script type="module">
const traits = JSON.parse(document.getElementById("traits").textContent);
const model = {get: (k) => traits[k], set: (k, v) => { traits[k] = v; }, save_changes() {}, on() {}, send() {}};
const url = URL.createObjectURL(new Blob([document.getElementById("esm").textContent], {type: "text/javascript"}));
const widget = (await import(url)).default;
widget.render({model, el: document.getElementById("out")});
window.ready = true;
</script>
<script type="text/plain" id="esm">ESM</script>
<script type="application/json" id="traits">TRAITS</script></body></html>"""


@pytest.mark.parametrize("scheme", SCHEMES)
def test_the_stepper_opens_a_box_in_place(browser, tmp_path, scheme):
    import json

    from tests.player.test_open_box import layered
    stepper = gradviz.step(layered(), collapse="scopes")
    stepper.run_to_end()
    stepper.goto(0)
    names = ("markup", "frames", "mid", "lines", "interval", "position", "total", "finished", "zero", "now",
             "counts", "boxes", "inner", "names")
    traits = {k: getattr(stepper, k) for k in names}
    page_text = (STEPPER_PAGE.replace("ESM", stepper._esm.replace("</script", "<\\/script"))
                 .replace("TRAITS", json.dumps(traits).replace("</", "<\\/")))
    path = tmp_path / "stepper.html"
    path.write_text(page_text, encoding="utf-8")
    page, errors = open_page(browser, path, SIZES[0], scheme)
    page.wait_for_function("() => window.ready")
    k = next(i for i, f in enumerate(stepper.frames) if f.get("i"))
    start, stop = stepper.frames[k]["i"]
    page.evaluate(f"document.querySelector('.gv-player').__gv.go({k})")
    root = page.locator(".gv-player")
    assert root.locator(".gv-open").is_visible()
    root.locator(".gv-open").click()
    page.keyboard.press("ArrowRight")
    f = stepper.inner[start + 1]
    total = stepper.counts[1]
    box = stepper.boxes[stepper.frames[k]["n"]]["title"]
    assert root.locator(".gv-count").inner_text() == f"backward {f['k'][0]} of {total} · in {box}"
    assert squeeze(root.locator(".gv-title").inner_html()) == squeeze(f["t"])
    active = page.eval_on_selector_all(".gv-inset:not([hidden]) g.node.gv-active", "els => els.map(e => e.id)")
    assert active == [f["n"]]
    shot(page, f"stepper-{scheme}-inside")
    page.keyboard.press("Escape")
    assert not root.locator(".gv-inset").is_visible() and root.get_attribute("data-frame") == str(k)
    # find opens the box that holds a parameter, in the Stepper too
    node, box = next((n, b) for text, n, b in expand(stepper.names) if text == "w1")
    page.keyboard.press("/")
    page.keyboard.type("w1")
    page.keyboard.press("Enter")
    assert page.evaluate("document.querySelector('.gv-player').__gv.opened().box") == box
    assert "gv-hit" in page.locator(f".gv-inset:not([hidden]) g.node[id='{node}']").get_attribute("class")
    assert root.locator(".gv-found").inner_text() == f"1 of 1: w1 (in {stepper.boxes[box]['title']})"
    assert errors == []
    page.close()


def test_a_mode_is_asked_before_each_step_and_can_hold_it_back(pages, browser):
    anim, path = pages["gpt"]
    page, errors = open_page(browser, path, SIZES[0], "light")
    root = page.locator(".gv-player")
    page.evaluate("""() => { const api = document.querySelector('.gv-player').__gv;
        window.asked = []; api.before((f) => { window.asked.push(f.t); return window.asked.length > 1; }); }""")
    page.keyboard.press("ArrowRight")
    assert root.get_attribute("data-frame") == "0"            # held back: the mode shows it when it wants
    assert page.evaluate("window.asked") == [anim.frames[1].to_json()["t"]]
    page.keyboard.press("ArrowRight")
    assert root.get_attribute("data-frame") == "1"
    assert errors == []
    page.close()


def test_find_in_a_box_that_does_not_open_reads_its_compact_entries(pages, browser):
    anim, path = pages["big"]
    compact = [e for e in anim.inside.names if isinstance(e, dict)]
    assert compact and len(anim.inside.names) < 100          # the chain's 20,000 nodes in a few entries
    texts = [text for text, _, box in expand(anim.inside.names) if box]
    box = next(e["b"] for e in compact)
    page, errors = open_page(browser, path, SIZES[0], "light")
    root = page.locator(".gv-player")
    term = texts[12_345].split(" ")[-1]                       # a tensor's symbol deep in the chain
    page.fill(".gv-find", term)
    page.keyboard.press("Enter")
    want = [t for t in texts if term.lower() in t.lower()]
    assert root.locator(".gv-found").inner_text() == f"1 of {len(want)}: {want[0]}"
    assert "gv-hit" in page.locator(f"g[id='{box}']").first.get_attribute("class").split()
    page.fill(".gv-find", "MulBackward0")
    page.keyboard.press("Enter")
    assert root.locator(".gv-found").inner_text().startswith(
        f"1 of {sum('MulBackward0' in t for t, _, _ in expand(anim.inside.names))}: MulBackward0")
    assert errors == []
    page.close()


def test_find_in_a_box_the_forward_pass_has_not_made_yet_goes_to_the_step_that_makes_it(browser, tmp_path):
    gradviz.manual_seed(0)
    x = gradviz.randn(4, requires_grad=True)
    y = x
    for _ in range(1_000):
        y = y * 1.001
    anim = animate(y.sum())                        # the chain folded into a box that does not open
    box = next(e["b"] for e in anim.inside.names if isinstance(e, dict))
    made = next(k for k, f in enumerate(anim.frames) if f.node == box)
    assert made > 0 and anim.frames[0].changes.get(box) == "hidden"
    page, errors = open_page(browser, anim.save(tmp_path / "chain.html"), SIZES[0], "light")
    page.fill(".gv-find", "t₅₀₀")
    page.keyboard.press("Enter")
    root = page.locator(".gv-player")
    assert root.get_attribute("data-frame") == str(made)
    assert root.locator(".gv-found").inner_text() == "1 of 1: t₅₀₀"
    assert "gv-hit" in page.locator(f"g[id='{box}']").first.get_attribute("class").split()
    assert errors == []
    page.close()


def test_the_note_of_what_was_folded_reads_whole_in_a_narrow_stage(pages, browser):
    """At 1024×768 the stage is about 515 px wide: the note under the diagram (what was folded, and
    that max_nodes=None draws every node) is whole in it at the last step, not cut at its sides."""
    anim, path = pages["gpt"]
    page, errors = open_page(browser, path, (1024, 768), "light")
    page.keyboard.press("End")
    settle(page)
    lines = page.evaluate("""() => {
        const st = document.querySelector('.gv-stage').getBoundingClientRect();
        return [...document.querySelectorAll('.gv-stage svg g.graph > text')].map(t => t.getBoundingClientRect())
          .filter(r => r.top >= st.top && r.bottom <= st.bottom)
          .map(r => [Math.round(r.left - st.left), Math.round(st.right - r.right)]);
    }""")
    assert lines and all(left >= 0 and right >= 0 for left, right in lines), lines
    assert errors == []
    page.close()


@pytest.mark.parametrize("size", SIZES)
def test_a_name_found_on_the_graph_is_shown_with_the_step_on_screen(pages, browser, size):
    """Find on the unfolded part of the graph keeps the running node in view where both fit: at the last
    step (the tied weight's AccumulateGrad) the position embedding's weight is found and both are shown."""
    anim, path = pages["gpt"]
    page, errors = open_page(browser, path, size, "dark")
    page.keyboard.press("End")
    settle(page)
    page.keyboard.press("/")
    page.keyboard.type("transformer.wpe.weight")
    page.keyboard.press("Enter")
    settle(page)
    hit = page.evaluate("document.querySelector('.gv-stage g.node.gv-hit').id")
    seen = page.evaluate("(" + SEE_STEP + ")(document.querySelector('.gv-player'))")
    assert seen["node"] != hit and seen["inStage"] and seen["onScreen"] and seen["unobstructed"], seen
    assert inside_rect(page, f".gv-stage g.node[id='{hit}']")
    assert errors == []
    page.close()
