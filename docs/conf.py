"""The site (`make site`): Sphinx with MyST-NB reads docs/ and notebooks/ and writes site/.

The source folder is the repository's root (`sphinx-build -c docs . site`), so links between the
README, docs/ and notebooks/ are the ones GitHub follows. Every page in docs/ and every notebook in
notebooks/ is on the site, the notebooks executed at build time (outputs cached between builds in
build/site-cache); site/index.html leads to the home page, docs/index.md. Nothing on a page is fetched from the
network: formulas are MathML made here (docs/_ext/mathml.py), not MathJax, and the theme's fonts
and scripts are its own files, copied into site/_static.
"""
import hashlib
import shutil
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))          # autodoc documents this checkout's gradviz
sys.path.insert(0, str(DOCS / "_ext"))

project = "gradviz"
author = "the gradviz authors"
copyright = "gradviz authors, MIT licence"

extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "mathml", "live_widgets", "exercises",
              "inline_svg"]
html_math_renderer = "mathml"
root_doc = "docs/index"
include_patterns = ["docs/**", "notebooks/*.md", "notebooks/*.ipynb"]
exclude_patterns = ["docs/_*", "**.ipynb_checkpoints"]
templates_path = ["_templates"]
html_additional_pages = {"index": "redirect.html"}

# MyST: GitHub-flavoured Markdown as the README and docs/ are written, with $math$ in notebooks
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3


def _code_version() -> str:
    """A hash of gradviz's source: outputs cached under another version are stale."""
    digest = hashlib.sha256()
    for path in sorted((ROOT / "gradviz").rglob("*")):
        if path.suffix in (".py", ".js", ".css") and "__pycache__" not in path.parts:
            digest.update(path.relative_to(ROOT).as_posix().encode() + path.read_bytes())
    return digest.hexdigest()[:16]


# MyST-NB: run every notebook at build time; rerun only those that changed since the last build,
# or all of them when gradviz itself changed (the cache knows only the notebooks' text)
CACHES = ROOT / "build" / "site-cache"
nb_execution_mode = "cache"
nb_execution_cache_path = str(CACHES / _code_version())
for _stale in CACHES.glob("*"):
    if str(_stale) != nb_execution_cache_path:
        shutil.rmtree(_stale, ignore_errors=True)
nb_execution_timeout = 300
nb_execution_raise_on_error = True
nb_merge_streams = True                # one print() is one block of output, as in Jupyter
nb_ipywidgets_js = {}                  # no widget manager from a CDN: a widget needs its kernel anyway
                                       # (docs/_ext/live_widgets.py puts a note in its place)

default_role = "py:obj"               # docstrings write names `like_this`: code, linked where documented
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": False}
autodoc_typehints = "description"

html_theme = "sphinx_book_theme"
html_title = "gradviz"
html_static_path = ["_static"]   # relative to docs/
html_css_files = ["site.css"]
html_last_updated_fmt = None
html_theme_options = {
    "repository_url": "",
    "use_download_button": True,
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "navbar_persistent": [],           # the search field is in the sidebar; none twice in a header
    # a notebook's players and diagrams, and the op reference's wide tables, take the width of the
    # page's table of contents (docs/_static/site.css lets the article use it)
    "secondary_sidebar_items": {"docs/*": ["page-toc"], "docs/ops": [], "notebooks/*": []},
}
html_context = {"default_mode": "auto"}   # light or dark, as the reader's system prefers
html_show_sourcelink = False
