"""Colours and fonts of a diagram: the torchviz palette by default, and a dark variant.

torchviz's colours are what PyTorch users recognise: grad_fn nodes light grey,
leaf tensors light blue, saved tensors orange, outputs darkolivegreen1.
Nodes built by a `create_graph=True` backward are filled by derivative order.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class Theme:
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
    sum_color: str = "firebrick"          # the "Σ over axis" mark on an edge
    # fill per derivative order: order 1 is what a create_graph backward built
    order_fills: tuple = field(default=("lightgray", "plum1", "lightpink", "khaki1", "palegreen"))

    def order_fill(self, order: int) -> str:
        if order <= 0:
            return self.op_fill
        return self.order_fills[min(order, len(self.order_fills) - 1)]


LIGHT = Theme()

DARK = Theme(
    name="dark", bgcolor="#1e1e1e", fontcolor="#e8e8e8", edge_color="#c8c8c8", border_color="#9a9a9a",
    op_fill="#4a4a4a", leaf_fill="#1f5f8b", saved_fill="#a35a00", output_fill="#4f7a28", hidden_fill="#2b2b2b",
    cluster_color="#8a8a8a", cluster_fill="#262626", scope_fill="#3c3563", sum_color="#ff8a80",
    order_fills=("#4a4a4a", "#6b3a6b", "#7a3a4a", "#6b6320", "#2f6b3a"),
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
