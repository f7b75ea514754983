"""The one look of gradviz: every colour, font and state style, for DOT, the player's CSS and the GIF.

Two layers:
- `Palette`: the colours of one scheme (light or dark): page, text, node fills, and the
  states of the animation (new, pending, active, flowing, done, written). The state
  colours are Okabe and Ito's colour-blind-safe set (blue, orange, vermillion, bluish
  green, reddish purple), and every state also differs by line width or dash pattern,
  so no state is told by hue alone.
- `Theme`: the Graphviz attributes of a static diagram, built from one palette
  (torchviz's familiar fills in light: grad_fn light grey, leaves light blue, saved
  tensors orange, outputs darkolivegreen1; nodes built by `create_graph=True` filled
  by derivative order).

`css()` writes both palettes as CSS variables (`--gv-*`) for the player: light by
default, dark under `prefers-color-scheme: dark`, and JupyterLab's theme (its
`data-jp-theme-light` flag and `--jp-*` fonts and page colours) or VS Code's dark
class override the system setting. `state_styles()` gives the same states as DOT
attributes for the GIF. Text colours keep a WCAG contrast of at least 4.5:1 on
the fills they sit on (`contrast()`; tests check every pair).
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, replace

# Theme values reach Graphviz attributes and, through them, SVG attributes and the player's CSS:
# only plain names, numbers and colours are let through, so no value can break out of its quotes.
# A colour: a name (X11 or /scheme/name), #rgb[a] hex, or "H,S,V" / "H S V" numbers.
_COLOUR = (re.compile(r"#[0-9A-Fa-f]{3,8}|/?[A-Za-z0-9]+(/[A-Za-z0-9]+)?|[0-9.]+[, ]+[0-9.]+[, ]+[0-9.]+"),
           "a colour (a name, #rrggbb or 'h,s,v')")
_FIELD_CHECKS = {
    "name": (re.compile(r"[A-Za-z0-9_-]+"), "a name of letters, digits, '_' and '-'"),
    "fontname": (re.compile(r"[A-Za-z0-9 ,._-]+"), "a font name (letters, digits, spaces, ',', '.', '_', '-')"),
    "fontsize": (re.compile(r"[0-9]+(\.[0-9]+)?"), "a number"),
}


def _check_values(obj) -> None:
    """ValueError for a theme or palette value that is not a plain name, number or colour."""
    for key, value in vars(obj).items():
        if key == "palette":
            if not isinstance(value, Palette):
                raise ValueError(f"theme palette={value!r} is not a Palette")
            continue
        check = _FIELD_CHECKS.get(key, _COLOUR)
        for v in (value if key in ("order_fills", "orders") else (value,)):
            if not isinstance(v, str) or not check[0].fullmatch(v):
                raise ValueError(f"theme {key}={v!r} is not {check[1]}")


@dataclass(frozen=True)
class Palette:
    """The colours of one scheme. Fills hold text in `fg`; `label` is edge-label text on `bg`."""
    bg: str
    fg: str
    muted: str            # secondary text (counts, captions)
    border: str           # node outlines, panel rules
    surface: str          # code and button backgrounds
    edge: str             # edges before backward
    idle: str             # edges backward has not used yet (no text is drawn in this colour)
    op: str               # grad_fn and AccumulateGrad nodes
    leaf: str
    saved: str
    output: str
    hidden: str           # folded placeholders
    scope: str            # a scope folded into one box
    cluster: str          # scope clusters
    waiting: str          # the fill of a node backward has not reached
    new: str              # forward: just created
    pending: str          # has received part of its gradient
    active: str           # running its VJP now
    active_fill: str      # the running node's fill (holds text in fg)
    flowing: str          # gradient moves along this edge now
    done: str
    written: str          # a leaf's .grad was written
    label: str            # the gradient written next to a flowing edge
    sum: str              # the "Σ over axis" mark on an edge
    orders: tuple = ()    # fills by derivative order 1, 2, ... (create_graph=True)

    def __post_init__(self) -> None:
        _check_values(self)


LIGHT_PALETTE = Palette(
    bg="#ffffff", fg="#1a1a1a", muted="#555555", border="#6e6e6e", surface="#f2f2f2",
    edge="#1a1a1a", idle="#b3b3b3",
    op="#d3d3d3", leaf="#add8e6", saved="#ffa500", output="#caff70", hidden="#ffffff", scope="#e6e6fa",
    cluster="#f7f7f7", waiting="#efefef",
    new="#0072b2", pending="#e69f00", active="#d55e00", active_fill="#ffd9c2", flowing="#d55e00", done="#009e73", written="#cc79a7",
    label="#a33d00", sum="#b22222", orders=("#e3c6f0", "#ffd6de", "#fff3a8", "#c8f5c8"),
)

DARK_PALETTE = Palette(
    bg="#1e1e1e", fg="#ececec", muted="#b0b0b0", border="#9a9a9a", surface="#2c2c2c",
    edge="#c8c8c8", idle="#5c5c5c",
    op="#3a3a3a", leaf="#1f4e6b", saved="#7a4a00", output="#3f5f1f", hidden="#2b2b2b", scope="#3c3563",
    cluster="#262626", waiting="#2a2a2a",
    new="#56b4e9", pending="#f0b840", active="#ff8c42", active_fill="#5a2a10", flowing="#ff8c42", done="#2bc49a", written="#e9a3c9",
    label="#ff9a57", sum="#ff9a57", orders=("#6b3a6b", "#7a3a4a", "#6b6320", "#2f6b3a"),
)


@dataclass(frozen=True)
class Theme:
    """Graphviz attributes of a static diagram (DOT colour names or #rrggbb)."""
    name: str = "light"
    fontname: str = "monospace"
    fontsize: str = "10"
    bgcolor: str = "white"
    fontcolor: str = "black"
    edge_color: str = "black"
    border_color: str = "black"
    op_fill: str = "lightgray"            # grad_fn nodes (and AccumulateGrad)
    leaf_fill: str = "lightblue"          # leaf tensors that require grad
    saved_fill: str = "orange"            # tensors saved for backward
    output_fill: str = "darkolivegreen1"  # the tensors drawn from
    hidden_fill: str = "white"            # placeholders for collapsed nodes
    cluster_color: str = "gray50"
    cluster_fill: str = "gray97"
    scope_fill: str = "lavender"          # a scope collapsed into one box
    sum_color: str = "firebrick"         # the "Σ over axis" mark on an edge
    # fill per derivative order: order 1 is what a create_graph backward built
    order_fills: tuple = field(default=("lightgray", "plum1", "lightpink", "khaki1", "palegreen"))
    palette: Palette = LIGHT_PALETTE      # the state colours (GIF) of this theme

    def __post_init__(self) -> None:
        _check_values(self)

    def order_fill(self, order: int) -> str:
        if order <= 0:
            return self.op_fill
        return self.order_fills[min(order, len(self.order_fills) - 1)]


LIGHT = Theme()

DARK = Theme(
    name="dark", bgcolor=DARK_PALETTE.bg, fontcolor=DARK_PALETTE.fg, edge_color=DARK_PALETTE.edge,
    border_color=DARK_PALETTE.border, op_fill=DARK_PALETTE.op, leaf_fill="#1f5f8b", saved_fill=DARK_PALETTE.saved,
    output_fill=DARK_PALETTE.output, hidden_fill=DARK_PALETTE.hidden, cluster_color="#8a8a8a",
    cluster_fill=DARK_PALETTE.cluster, scope_fill=DARK_PALETTE.scope, sum_color=DARK_PALETTE.sum,
    order_fills=("#4a4a4a",) + DARK_PALETTE.orders, palette=DARK_PALETTE,
)

THEMES = {"light": LIGHT, "torchviz": LIGHT, "dark": DARK}


def resolve_theme(theme: "Theme | str | dict | None") -> Theme:
    """None or a name ("light", "dark"), a Theme, or a dict of overrides on the light theme."""
    if theme is None:
        return LIGHT
    if isinstance(theme, Theme):
        return theme
    if isinstance(theme, str):
        try:
            return THEMES[theme]
        except KeyError:
            raise ValueError(f"unknown theme {theme!r}; expected one of {sorted(THEMES)} or a Theme") from None
    if isinstance(theme, dict):
        base = resolve_theme(theme.get("name", "light")) if isinstance(theme.get("name"), str) \
            and theme.get("name") in THEMES else LIGHT
        return replace(base, **{k: v for k, v in theme.items() if k != "name" or v not in THEMES})
    raise TypeError(f"theme must be None, a name, a Theme or a dict, not {type(theme).__name__}")


# -- fonts -----------------------------------------------------------------------------------
# JupyterLab's fonts when the player sits in JupyterLab, the system's otherwise
UI_FONT = 'var(--jp-ui-font-family, system-ui, -apple-system, "Segoe UI", Roboto, sans-serif)'
MONO_FONT = 'var(--jp-code-font-family, ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace)'


# -- states as DOT attributes (the GIF) -------------------------------------------------------
def state_styles(palette: Palette = LIGHT_PALETTE) -> tuple:
    """(node styles, edge styles): state -> DOT attributes, the GIF's version of the player's CSS."""
    p = palette
    nodes = {
        "hidden": {"style": "invis"},
        "new": {"color": p.new, "penwidth": "2.5"},
        "waiting": {"color": p.idle, "fontcolor": p.muted},
        "pending": {"color": p.pending, "penwidth": "2", "style": "filled,dashed"},
        "active": {"color": p.active, "penwidth": "4"},
        "done": {"color": p.done, "penwidth": "1.5"},
        "written": {"color": p.written, "penwidth": "3"},
    }
    edges = {
        "hidden": {"style": "invis"},
        "new": {"color": p.new, "penwidth": "2"},
        "idle": {"color": p.idle, "fontcolor": p.muted},
        "flowing": {"color": p.flowing, "penwidth": "3", "style": "dashed", "fontcolor": p.label},
        "done": {"color": p.done},
    }
    # forward mode's edge states (player/assets/forward.css) wear backward's colours; only the
    # arrowheads differ, which keep pointing the way the tangent runs
    edges.update({state: edges[like] for state, like in FORWARD_EDGE_STATES.items()})
    return nodes, edges


# forward mode's edge state -> the backward state whose colours it shares: not reached yet, now, done
FORWARD_EDGE_STATES = {"ahead": "idle", "carrying": "flowing", "carried": "done"}


# -- CSS variables (the player) ---------------------------------------------------------------
def _variables(p: Palette, page_from_jupyter: bool) -> str:
    values = asdict(p)
    values["active-fill"] = values.pop("active_fill")
    for k, fill in enumerate(values.pop("orders"), 1):
        values[f"o{k}"] = fill
    if page_from_jupyter:
        # the notebook's own page and text colours, so the player sits in it seamlessly
        values["bg"] = f"var(--jp-layout-color0, {p.bg})"
        values["fg"] = f"var(--jp-content-font-color1, {p.fg})"
    return ";".join(f"--gv-{k}:{v}" for k, v in values.items())


def css() -> str:
    """The palettes as CSS variables on `.gv-root`, following the page's light or dark scheme."""
    light_jp, dark_jp = _variables(LIGHT_PALETTE, True), _variables(DARK_PALETTE, True)
    return (
        f".gv-root{{--gv-font:{UI_FONT};--gv-mono:{MONO_FONT};{light_jp};color-scheme:light}}\n"
        f"@media (prefers-color-scheme: dark){{.gv-root{{{dark_jp};color-scheme:dark}}}}\n"
        # an explicit host theme beats the system setting: JupyterLab's flag, VS Code's class
        f'body[data-jp-theme-light="true"] .gv-root,.gv-root.gv-light{{{light_jp};color-scheme:light}}\n'
        f'body[data-jp-theme-light="false"] .gv-root,body.vscode-dark .gv-root,body.vscode-high-contrast '
        f".gv-root,.gv-root.gv-dark{{{dark_jp};color-scheme:dark}}\n"
    )


# -- WCAG contrast ----------------------------------------------------------------------------
def _luminance(colour: str) -> float:
    h = colour.lstrip("#")
    if len(h) == 3:
        h = "".join(c * 2 for c in h)
    channels = [int(h[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio of two #rrggbb colours (1 to 21)."""
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def text_pairs(p: Palette) -> list:
    """(name, text colour, background) for every place the player draws text."""
    pairs = [("text", p.fg, p.bg), ("muted", p.muted, p.bg), ("code", p.fg, p.surface), ("edge label", p.label, p.bg),
             ("sum mark", p.sum, p.bg)]
    pairs += [(f"node text on {k}", p.fg, getattr(p, k))
              for k in ("op", "leaf", "saved", "output", "hidden", "scope", "cluster", "waiting", "active_fill")]
    pairs += [(f"node text on order {k}", p.fg, fill) for k, fill in enumerate(p.orders, 1)]
    return pairs
