"""Diagrams inline on the site: an SVG image in a page (the README's grad_fn chain on the home page)
is written into the HTML itself, at its own size, in a box that scrolls, instead of an <img> that
the column's width shrinks until its labels cannot be read. GitHub, which reads the same README,
keeps the image."""
import re
from pathlib import Path

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

_PROLOGUE = re.compile(r"\A.*?(?=<svg\b)", re.S)   # the XML declaration, DOCTYPE and comments


class InlineSvg(SphinxPostTransform):
    default_priority = 150
    formats = ("html",)

    def run(self, **kwargs) -> None:
        srcdir = Path(self.app.srcdir)
        for image in list(self.document.findall(nodes.image)):
            uri = image.get("uri", "")
            path = (srcdir / uri).resolve()
            if not uri.endswith(".svg") or not path.is_file():
                continue
            svg = _PROLOGUE.sub("", path.read_text(encoding="utf-8"), count=1)
            label = image.get("alt", "")
            html = (f'<div class="gv-inline-svg" role="img" aria-label="{label}" tabindex="0">{svg}</div>')
            target = image.parent if isinstance(image.parent, nodes.reference) else image
            target.replace_self(nodes.raw("", html, format="html"))


def setup(app):
    app.add_post_transform(InlineSvg)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
