# ssbnn: `make demo` runs the main job, `make test` runs every test; both set up .venv on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test install lab export readme docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: settings.ini setup.py | $(BIN)/python
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ".[dev]"
	touch $@

install: $(VENV)/.installed

$(VENV)/.lab: $(VENV)/.installed
	$(BIN)/python -m pip install -q -e ".[dev,notebooks]"
	touch $@

lab: $(VENV)/.lab   ## JupyterLab in .venv, opened on the tutorials
	$(BIN)/jupyter lab nbs/tutorials

demo: install   ## pretrain and compare on the embedded digits; writes ssbnn-runs/<time>/
	$(BIN)/ssbnn

test: install   ## every notebook (nbdev_test), the installed package, the CLI and bad input (two workers)
	$(BIN)/python -m pytest -n 2

export: install   ## notebooks -> ssbnn/ (never edit ssbnn/ by hand)
	$(BIN)/nbdev_export

readme: install   ## README.md from nbs/index.ipynb (offline: no Quarto needed)
	$(BIN)/python tools/make_readme.py

docs: install   ## the docs site into _docs/, offline (nbdev processing + smalldocs; `nbdev_docs` where Quarto exists)
	$(BIN)/python tools/build_docs.py

clean:
	rm -rf _proc _docs build *.egg-info .pytest_cache
