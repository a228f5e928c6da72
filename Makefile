# veduta cook: set-up, tests, sample assets and benchmarks.
PYTHON ?= python3
JOBS   ?= $(shell nproc 2>/dev/null || echo 2)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# node tools of the test suite (package.json: the Khronos glTF Validator)
NODE_STAMP := node_modules/.installed

.PHONY: all assets test lint format bench images clean distclean gltf-validate browser

all: assets

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	PYTHONWARNINGS='ignore:Editable installation' $(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $(NODE_STAMP)

# Cook the sample game in assets/ (incremental; `-n` cooks in parallel).
assets: $(STAMP)
	$(BIN)/doit -n $(JOBS) cook

# The example pictures of the docs (docs/images/), drawn by the tools from the sample game.
images: $(STAMP)
	$(BIN)/python docs/images/make_images.py

# The whole test suite.
test: $(STAMP) $(NODE_STAMP) browser
	$(BIN)/python -m pytest -n $(JOBS)

# The report's HTML page is tested in a real headless browser (tests/tools/test_report_html.py):
# Debian's Chromium and its WebDriver, installed only when missing (as root; others are told how).
browser:
	@if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    export DEBIAN_FRONTEND=noninteractive; \
	    apt-get install -y -qq chromium chromium-driver >/dev/null 2>&1 || \
	      { apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null; }; \
	  else \
	    echo "note: the HTML report test needs Chromium: sudo apt-get install chromium chromium-driver"; \
	  fi; \
	fi

# Validate exported glTF files with the Khronos glTF Validator (docs/export.md):
#   make gltf-validate FILES="crate.glb valley.glb"
gltf-validate: $(NODE_STAMP)
	@test -n "$(FILES)" || { echo 'usage: make gltf-validate FILES="a.glb b.glb"' >&2; exit 2; }
	node tests/export/gltf_validate.js --summary $(FILES)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check veduta tests bench
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff format veduta tests bench

# Benchmarks: N=10000 assets by default (make bench N=2000 for a quick look; several sizes, up to
# issue 23's: make bench N=1000,10000,50000,100000).
N ?= 10000
bench: $(STAMP)
	$(BIN)/python -m bench --assets $(N)

clean:
	rm -rf assets/.cooked cache/doit* cache/state* cache/scan* cache/store

distclean: clean
	rm -rf $(VENV) *.egg-info node_modules
