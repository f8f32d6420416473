# Two commands on a fresh machine with Python 3.11: `make app` and `make test`.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PACKAGES := llm core casebook kg indexes lab naive_rag hipporag lexical hybrid three_stage vector_graph hubmesh_rag investigate

.PHONY: install app test test-all test-fast lint typecheck cli check bench clean

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
	OMP_NUM_THREADS=2 $(PY) -m pytest -q -rs --durations=12 -m "not slow" tests

# Also the tests that build a whole benchmark set (marked slow: the PageRank engines on MuSiQue's 1,890 passages).
test-all: $(STAMP)
	OMP_NUM_THREADS=2 $(PY) -m pytest -q -rs --durations=12 tests

# Everyday tier: no LLM, no browser, no whole-benchmark build (tests marked slow or llm are left out).
test-fast: $(STAMP)
	OMP_NUM_THREADS=2 $(PY) -m pytest -q -m "not llm and not slow" --durations=5 tests

lint: $(STAMP)
	$(VENV)/bin/ruff check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy $(PACKAGES) run_comparison.py streamlit_app.py benchmarks

bench: $(STAMP)
	$(PY) benchmarks/run_all.py --quick

clean:
	rm -rf $(VENV) data/index
