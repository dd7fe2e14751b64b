# make serve   set up, then build and serve the site at http://127.0.0.1:8000 (live reload)
# make site    set up, then build site/ only
# make test    set up, then run every test (unit, build, lab, browser)
# Set-up is a local .venv and node_modules (npm ci). The site needs the Python deps
# and the test extra; `make test` adds the lab extra (torch, CPU build) for lab/'s tests.

VENV   := .venv
PY     := $(VENV)/bin/python
PYDEPS := $(VENV)/.installed
LABDEPS := $(VENV)/.installed-lab
NODE   := node_modules/.package-lock.json

.PHONY: setup site serve test bench clean

setup: $(PYDEPS) $(NODE)

$(PYDEPS): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	touch $@

$(LABDEPS): $(PYDEPS)
	$(PY) -m pip install --quiet -e ".[test,lab]"
	touch $@

$(NODE): package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

site: setup
	$(PY) build.py

serve: setup
	$(VENV)/bin/mkdocs serve --dev-addr 127.0.0.1:8000

test: setup $(LABDEPS)
	cd tests && ../$(PY) ensure_browser.py
	$(PY) -m pytest

bench: setup
	$(PY) benchmarks/site_speed.py

clean:
	rm -rf site .site.* $(VENV) node_modules
