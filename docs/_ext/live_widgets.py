"""A notebook widget on the site: a note where it stood, not an empty box or its Python repr.

A widget (the Stepper) is driven by the notebook's kernel, which a static page does not have; the
HTML players beside it step without one. The note goes in before MyST-NB picks an output's format,
and the widgets' saved state (hundreds of kB that nothing on the page reads) stays out of the page.
"""
from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
NOTE = ("A live widget stands here in the notebook: it runs the kernel's backward one node per click, so "
        "it needs a running notebook (open this one in JupyterLab). The players on this page step "
        "without one.")


class LiveWidgetNote(SphinxPostTransform):
    default_priority = 3          # before MyST-NB's SelectMimeType (4)

    def run(self, **kwargs) -> None:
        for bundle in list(self.document.findall(nodes.container)):
            if bundle.get("nb_element") != "mime_bundle":
                continue
            if any(child.get("mime_type") == WIDGET_VIEW for child in bundle.children):
                note = nodes.note("", nodes.paragraph("", NOTE))
                note["classes"].append("live-widget")
                bundle.replace_self(note)


def drop_widget_state(app, pagename, templatename, context, doctree) -> None:
    scripts = context.get("script_files", [])
    context["script_files"] = [js for js in scripts if getattr(js, "attributes", {}).get("type") != WIDGET_STATE]


def setup(app):
    app.add_post_transform(LiveWidgetNote)
    app.connect("html-page-context", drop_widget_state, priority=900)   # after MyST-NB adds it
    return {"parallel_read_safe": True, "parallel_write_safe": True}
