"""Formulas on the site as MathML, converted at build time with latex2mathml.

The player typesets its formulas the same way; browsers draw MathML themselves, so a page needs
no MathJax, no web font and no request.
"""
from docutils import nodes
from latex2mathml.converter import convert


def _inline(self, node: nodes.Element) -> None:
    self.body.append(convert(node.astext()))
    raise nodes.SkipNode


def _block(self, node: nodes.Element) -> None:
    if node.get("number"):
        self.body.append(f'<span class="eqno">({node["number"]})</span>')
    for formula in [node.astext()] if node.get("nowrap") else node.astext().split("\n\n"):
        self.body.append(f'<div class="math">{convert(formula, display="block")}</div>')
    raise nodes.SkipNode


def setup(app):
    app.add_html_math_renderer("mathml", (_inline, None), (_block, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
