"""The player's HTML closes every element it opens and nothing more, so it can sit inside any page
(a static site's article, a blog post) without closing the page's own boxes."""
from html.parser import HTMLParser

import gradviz as torch
from gradviz.player import animate
from gradviz.player.html import markup

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Nesting(HTMLParser):
    """The elements still open, and every end tag that matched no open element."""

    def __init__(self):
        super().__init__()
        self.open, self.stray = [], []

    def handle_starttag(self, tag, attrs):
        if tag not in VOID:
            self.open.append(tag)

    def handle_endtag(self, tag):
        if self.open and self.open[-1] == tag:
            self.open.pop()
        else:
            self.stray.append((tag, list(self.open[-3:])))


def nesting(html: str) -> Nesting:
    parser = Nesting()
    parser.feed(html)
    parser.close()
    return parser


def test_the_fragment_a_notebook_shows_is_balanced():
    x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    loss = (x * x.exp()).sum()
    parsed = nesting(animate(loss, names={"x": x, "loss": loss})._repr_html_())
    assert parsed.stray == [] and parsed.open == []


def test_markup_leaves_only_the_players_box_open():
    parsed = nesting(markup("gv-test", "<svg></svg>", 3, "title", "<p>text</p>"))
    assert parsed.stray == []
    assert parsed.open == ["div"]          # the caller's data and script go inside, then one </div>
