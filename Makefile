# Two commands do all set-up on a fresh Debian/Ubuntu machine:
#   make demo   renders the tutorials' examples into assets/demo
#   make test   installs what the tests need (Graphviz, Chromium, torch CPU, ...) and runs them
#   make assets regenerates the README's screenshots of the player into assets/
#   make docs   regenerates docs/ops.md, the op reference, from the op registry
#   make site   builds the static site into site/ (site/index.html): the notebooks executed, docs/, the API
VENV   ?= .venv
PY     := $(VENV)/bin/python
SUDO   := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
APT    := DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get

.PHONY: demo test bench assets docs site system-graphviz system-chromium clean

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[notebook,gif]'
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[test,notebook,gif]'
	touch $@

system-graphviz:
	@command -v dot >/dev/null 2>&1 || { $(APT) update -qq && $(APT) install -y -qq graphviz >/dev/null; } \
	  || echo "Graphviz's dot could not be installed; gradviz falls back to its WebAssembly build"

system-chromium:
	@[ -x /usr/bin/chromium ] || { $(APT) update -qq && $(APT) install -y -qq chromium >/dev/null; }

demo: system-graphviz $(VENV)/.installed
	$(VENV)/bin/gradviz demo -o assets/demo

test: system-graphviz system-chromium $(VENV)/.installed-test
	$(PY) -m pytest -q

# screenshots of the player (three steps, light and dark) for the README
assets: system-graphviz system-chromium $(VENV)/.installed-test
	$(PY) -m tests.support.player_screenshots assets

# the op reference: every record, its PyTorch node, formula, VJPs and the functions that record it
docs: $(VENV)/.installed
	$(PY) -m gradviz.reference > docs/ops.md

$(VENV)/.installed-site: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[site,notebook]'
	touch $@

# the site: Sphinx and MyST-NB over docs/ and notebooks/ (notebooks run at build time, cached in build/)
site: system-graphviz $(VENV)/.installed-site
	$(PY) -m sphinx -b html -c docs -d build/site-doctrees -q . site

bench: $(VENV)/.installed-test
	$(PY) benchmarks/engine.py
	$(PY) benchmarks/draw.py
	$(PY) benchmarks/player.py

clean:
	rm -rf $(VENV) build *.egg-info site jupyter_execute
