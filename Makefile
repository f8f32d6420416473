# Two commands on a fresh machine with Python 3.11: `make app` and `make test`.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install app test lint cli check bench clean

$(STAMP): requirements.txt requirements-dev.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	$(PY) -m pip install --quiet --no-deps -e .
	touch $(STAMP)

install: $(STAMP)

app: $(STAMP)
	$(VENV)/bin/streamlit run streamlit_app.py --server.address 127.0.0.1 --server.port 8501

cli: $(STAMP)
	$(PY) run_comparison.py

check: $(STAMP)
	$(PY) -m llm check

test: $(STAMP)
	OMP_NUM_THREADS=2 $(PY) -m pytest -q -rs --durations=12 tests

lint: $(STAMP)
	$(VENV)/bin/ruff check .

bench: $(STAMP)
	$(PY) benchmarks/run_all.py --quick

clean:
	rm -rf $(VENV) data/index
