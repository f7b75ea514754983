"""A folded box's count agrees with what it lists: "N nodes" is the sum of its "Name ×k" lines."""
from __future__ import annotations

import re

import gradviz as torch
from gradviz import nn
from gradviz.render import draw


def test_a_folded_modules_count_is_the_sum_of_what_it_lists():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
    out = model(torch.randn(3, 4)).sum()
    diagram = draw(out, names=model, collapse="scopes")
    index = {n.id: n for n in diagram.trace.nodes}
    assert diagram.view.groups
    for group in diagram.view.groups:
        lines = group.label_lines(index)
        (count,) = [int(m.group(1).replace(",", "")) for line in lines for m in [re.fullmatch(r"([\d,]+) nodes?", line)] if m]
        listed = sum(int(k.replace(",", "")) for line in lines for k in re.findall(r"×([\d,]+)", line))
        assert count == listed and count > 0, lines
