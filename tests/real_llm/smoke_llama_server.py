"""Opt-in smoke test against a REAL llama-server (`make test-llm`; not part of `make test`:
the file name does not match test_*.py, so pytest collects it only when named).

llama.cpp is built from source (tests/real_llm/build_llama_server.sh) and serves Gemma 3 270M
from PyPI with one thread. That model is far too small to extract well; what is checked is the
wire and the bookkeeping: the provider detected once, every request a json_schema one with a
length cap and alternating roles, every complete answer valid against the schema, at most one
call per message plus the bounded retries, every failure kept as a failed episode, nothing
lost, and the time per message. Three short checks show the faults that a real server exposes
and the scripted one reproduces (tests/unit/test_llm_endpoints.py).
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import openai
import pytest

from engine.embedding import Embedder
from engine.extraction.llm import LLMExtractor
from engine.extraction.prompts import extraction_json_schema
from engine.extraction.schema import ChatMessage
from engine.memory import Memory
from engine.models import AddResult
from engine.store.falkordb import FalkorDBStore
from engine.store.falkordb_server import EmbeddedServer
from engine.testing.scripted_llm import roles_alternate
from tests.real_llm.llama_server import (
    CACHE,
    GEMMA_TEMPLATE,
    LlamaServer,
    RecordingProxy,
    model_path,
)

USER = "alice123"
SEED = [  # the seed conversation (tests/integration/test_conversation.py)
    "I like hiking",
    "I like playing badminton",
    "I hate playing badminton",
    "My friend is called John, and John has a dog named Tommy",
    "My name is Alice",
    "John likes hiking, and Harry likes hiking too",
    "My friend Peter is Spider-Man",
]
MAX_RETRIES = 1
TIMEOUT_S = 90.0
SEED_BUDGET_S = 180.0
MODEL = "gemma-3-270m"
# A 270M model under greedy decoding loops inside the JSON (the same alias again and again)
# until the length cap; some sampling lets it finish an answer now and then, and a cap well
# under the default keeps a looping answer short. Both are ordinary settings.
TEMPERATURE = float(os.environ.get("GRAPHMEM_TEST_LLM_TEMPERATURE", "0.7"))
MAX_TOKENS = int(os.environ.get("GRAPHMEM_TEST_LLM_MAX_TOKENS", "192"))


@pytest.fixture(scope="module")
def binary() -> Path:
    path = os.environ.get("GRAPHMEM_LLAMA_SERVER")
    if not path or not Path(path).is_file():
        pytest.fail("GRAPHMEM_LLAMA_SERVER is not set: run `make test-llm` (it builds the server)")
    return Path(path)


@pytest.fixture(scope="module")
def server(binary: Path) -> Iterator[LlamaServer]:
    template = ("--chat-template-file", str(GEMMA_TEMPLATE))
    with LlamaServer(binary, model_path(), *template) as llama:
        print(f"\nllama-server ready in {llama.wait_ready():.1f} s ({llama.log_path})")
        yield llama
        assert llama.process.poll() is None, f"llama-server crashed: see {llama.log_path}"


@pytest.fixture
def proxy(server: LlamaServer) -> Iterator[RecordingProxy]:
    recorder = RecordingProxy(server.url)
    yield recorder
    recorder.close()


@pytest.fixture
def graph(falkordb_server: EmbeddedServer, embedder: Embedder) -> Iterator[FalkorDBStore]:
    store = FalkorDBStore.embedded(falkordb_server, f"real_llm_{os.getpid()}")
    store.setup(embedder.dimension)
    yield store
    store.reset()
    store.close()


def test_seed_conversation_through_llama_server(
    server: LlamaServer,
    proxy: RecordingProxy,
    graph: FalkorDBStore,
    embedder: Embedder,
    tmp_path: Path,
) -> None:
    mem = Memory(
        store=graph,
        embedder=embedder,
        data_dir=tmp_path,
        openai_base_url=proxy.base_url,
        llm_model=MODEL,
        llm_max_retries=MAX_RETRIES,
        llm_timeout_s=TIMEOUT_S,
        llm_temperature=TEMPERATURE,
        llm_max_tokens=MAX_TOKENS,
    )
    extractor = mem.extractor
    assert isinstance(extractor, LLMExtractor)
    started, server_cpu = time.perf_counter(), server.cpu_seconds()
    results, seconds = [], []
    with extractor:
        for text in SEED:
            began = time.perf_counter()
            results.append(mem.add(text, USER))  # a crash here fails the test
            seconds.append(time.perf_counter() - began)
    total = time.perf_counter() - started
    server_cpu = server.cpu_seconds() - server_cpu
    ours = total - sum(e.seconds for e in proxy.exchanges)  # graphmem's own time
    _report(results, seconds, {"total_s": total, "server_cpu_s": server_cpu, "graphmem_s": ours})

    models = [e for e in proxy.exchanges if e.path.endswith("/models")]
    assert len(models) == 1 and extractor.describe() == "llamacpp: json_schema"
    chats = proxy.chats()
    assert all(1 <= r.llm_calls <= 1 + MAX_RETRIES for r in results)
    assert len(chats) == sum(r.llm_calls for r in results)
    schema = extraction_json_schema(strict=True)
    for exchange in chats:
        assert exchange.status == 200, exchange.answer
        request = exchange.request or {}
        assert request["response_format"]["json_schema"]["schema"] == schema
        assert request["max_tokens"] == MAX_TOKENS
        assert roles_alternate(request["messages"])
        choice = exchange.answer["choices"][0]
        if choice["finish_reason"] != "length":  # a cut-off answer is a reported fault
            jsonschema.validate(json.loads(choice["message"]["content"]), schema)
    for result in results:
        [episode] = mem.reads.episodes_by_uids(USER, result.episode_uids)
        assert episode.content in SEED
        if result.extraction_error is None:
            assert episode.status == "ok"
        else:
            assert (episode.status, episode.error) == ("failed", result.extraction_error)
    assert mem.stats(USER).episodes == len(SEED)
    assert max(seconds) <= TIMEOUT_S * (1 + MAX_RETRIES)
    # The budget holds for one core of our own: the server's CPU time plus graphmem's. On a
    # shared machine the wall time is longer by the load (printed above, not asserted).
    needed = server_cpu + ours
    assert needed <= SEED_BUDGET_S, f"the seed conversation needs {needed:.0f} s of one core"


def test_tool_choice_required_is_understood_and_the_object_form_is_not(
    server: LlamaServer, proxy: RecordingProxy
) -> None:
    client = openai.OpenAI(base_url=proxy.base_url, api_key="k", max_retries=0)
    extractor = LLMExtractor(
        client, MODEL, provider="llamacpp", output="tools", max_retries=0, max_tokens=128
    )
    outcome = extractor.extract([ChatMessage(content="I like tea")], [], user_name=None)
    client.close()
    [exchange] = proxy.chats()
    assert (exchange.request or {})["tool_choice"] == "required" and exchange.status == 200
    assert outcome.llm_calls == 1  # a tool call, or a fault reported as such
    print(f"\ntools + tool_choice required: {outcome.error or outcome.extraction}")
    log = server.log_path.read_text(errors="replace")
    assert "Wrong type supplied for parameter 'tool_choice'" not in log
    answer = _post(server, {"tools": exchange.request["tools"], "tool_choice": _NAMED})
    assert answer[0] == 200  # accepted, but ...
    log = server.log_path.read_text(errors="replace")
    assert "Wrong type supplied for parameter 'tool_choice'" in log  # ... ignored: "auto"


def test_gemma_template_refuses_two_user_turns_in_a_row(server: LlamaServer) -> None:
    twice = [{"role": "user", "content": "I like tea"}, {"role": "user", "content": "Again"}]
    status, answer = _post(server, {"messages": twice})
    assert status == 400 and "Conversation roles must alternate" in json.dumps(answer)
    once = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    assert _post(server, {"messages": once})[0] == 200


def test_without_jinja_tools_get_http_500_and_json_schema_takes_over(binary: Path) -> None:
    with LlamaServer(binary, model_path(), "--no-jinja") as plain:
        plain.wait_ready()
        recorder = RecordingProxy(plain.url)
        client = openai.OpenAI(base_url=recorder.base_url, api_key="k", max_retries=0)
        extractor = LLMExtractor(client, MODEL, output="tools", max_retries=0, max_tokens=128)
        outcome = extractor.extract([ChatMessage(content="I like tea")], [], user_name=None)
        client.close()
        recorder.close()
    refused, answered = recorder.chats()
    assert refused.status == 500 and "requires --jinja" in json.dumps(refused.answer)
    assert (answered.request or {})["response_format"]["type"] == "json_schema"
    assert outcome.llm_calls == 2 and outcome.mode == "json_schema"


_NAMED = {"type": "function", "function": {"name": "record_memory"}}


def _post(server: LlamaServer, extra: dict[str, Any]) -> tuple[int, Any]:
    body = {"messages": [{"role": "user", "content": "I like tea"}], "max_tokens": 8} | extra
    request = urllib.request.Request(
        f"{server.url}/v1/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def _report(results: list[AddResult], seconds: list[float], times: dict[str, float]) -> None:
    rows = [
        {
            "message": text,
            "seconds": round(took, 1),
            "llm_calls": r.llm_calls,
            "prompt_tokens": r.prompt_tokens,
            "completion_tokens": r.completion_tokens,
            "facts_added": r.facts_added,
            "error": r.extraction_error,
            "left_out": r.errors,
        }
        for text, took, r in zip(SEED, seconds, results, strict=True)
    ]
    summary = {name: round(value, 1) for name, value in times.items()} | {"messages": rows}
    (CACHE / "test-llm-last.json").write_text(json.dumps(summary, indent=2))
    print(
        f"\nseed conversation: {times['total_s']:.1f} s wall for {len(SEED)} messages; "
        f"llama-server CPU {times['server_cpu_s']:.1f} s, graphmem {times['graphmem_s']:.1f} s"
    )
    for row in rows:
        outcome = row["error"] or f"{row['facts_added']} facts"
        print(
            f"  {row['seconds']:6.1f} s  {row['llm_calls']} call(s)  {outcome}  <- {row['message']}"
        )
