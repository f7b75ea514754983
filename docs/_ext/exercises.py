"""Exercises on the site: a code cell tagged `solution` comes folded, behind "Show the solution".

The notebooks tag each exercise cell `exercise` and the cell that solves it `solution`; a learner
on the site predicts first and unfolds the answer after, as in a notebook whose solution is
collapsed. MyST-NB folds a cell whose `hide_mode` is set; this sets it, before MyST-NB's own
transform (priority 199) wraps the cell.
"""
from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform


class FoldSolutions(SphinxPostTransform):
    default_priority = 150
    formats = ("html",)

    def run(self, **kwargs) -> None:
        for cell in self.document.findall(nodes.container):
            if cell.get("nb_element") != "cell_code":
                continue
            if "solution" in cell.get("cell_metadata", {}).get("tags", []):
                cell["hide_mode"] = "all"
                cell["prompt_show"] = "Show the solution"
                cell["prompt_hide"] = "Hide the solution"


def setup(app):
    app.add_post_transform(FoldSolutions)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
