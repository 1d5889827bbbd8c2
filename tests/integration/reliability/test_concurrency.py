"""Concurrency: threads and processes adding overlapping facts for one user at once leave one
node per entity key, exact mention counts and every fact; a new fact or entity two of them
write at once is reported added by one and has one ADD event."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.embedding import Embedder
from engine.load import LoadReport
from engine.memory import Memory
from engine.models import AddResult
from engine.normalize import entity_key
from engine.store.base import GraphStore, WriteBatch, Written
from engine.testing.scripted_llm import Reply, ScriptedLLM, ToolCall
from engine.transfer.document import parse_snapshot
from engine.transfer.export import read_snapshot
from engine.transfer.report import ImportReport
from tests.integration.reliability.conftest import Tally
from tests.integration.reliability.graph_checks import duplicate_keys, half_written
from tests.integration.reliability.helpers import extraction, llm_memory

THREADS, ROUNDS, USER = 8, 4, "crowd"
Triple = tuple[str, str, str]
NEW_FACTS = [(f"Owner {i % 12}", "OWNS", f"Thing {i}") for i in range(120)]


def calls_of(worker: int) -> list[list[Triple]]:
    """The add_facts calls one worker makes: shared facts every round, plus its own."""
    shared = [("Hub", "KNOWS", f"Person {j}") for j in range(6)]
    return [
        [*shared, (f"Worker {worker}", "LIKES", f"Person {(worker + r) % 6}")]
        for r in range(ROUNDS)
    ]


def expected(workers: range) -> tuple[Counter[str], Counter[Triple]]:
    """Entity mentions by key and fact mentions by triple, over every call of `workers`."""
    entities: Counter[str] = Counter()
    facts: Counter[Triple] = Counter()
    for worker in workers:
        for call in calls_of(worker):
            for s, p, o in call:
                entities[entity_key(s)] += 1
                entities[entity_key(o)] += 1
                facts[(s, p, o)] += 1
    return entities, facts


def assert_exact(mem: Memory, workers: range) -> int:
    """Every fact stored once with its exact mention count; one node per key. Returns the
    number of acknowledged facts missing (must be 0)."""
    entities, facts = expected(workers)
    stored = {(f.subject, f.predicate, f.object): f.mentions for f in mem.get_all(USER)}
    lost = sum(1 for triple in facts if triple not in stored)
    assert stored == dict(facts)
    counts = {se.entity.key: se.entity.mentions for se in mem.top_entities(USER, 1000)}
    assert counts == dict(entities)
    assert duplicate_keys(mem.store, USER) == [] and half_written(mem.store, USER) == []
    return lost


def run_threads(target: Any, count: int) -> None:
    errors: list[BaseException] = []
    barrier = threading.Barrier(count)

    def work(i: int) -> None:
        try:
            barrier.wait()
            target(i)
        except BaseException as exc:  # re-raised below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors


def test_eight_threads_add_overlapping_facts(memory: Memory, tally: Tally) -> None:
    def worker(i: int) -> None:
        for call in calls_of(i):
            memory.add_facts(call, USER)

    run_threads(worker, THREADS)
    tally.cases += THREADS * ROUNDS
    tally.lost += assert_exact(memory, range(THREADS))


def _responder(body: dict[str, Any]) -> Reply:
    found = re.findall(r"<<(.+?)\|(\w+)\|(.+?)>>", json.dumps(body["messages"]))
    return ToolCall(extraction([(s, p, o) for s, p, o in found[-1:]]))


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM(default=_responder) as server:
        yield server


def test_eight_threads_add_overlapping_conversations(
    shared_store: GraphStore, embedder: Embedder, llm: ScriptedLLM, tmp_path: Path, tally: Tally
) -> None:
    store = shared_store
    said = [("Hub", "KNOWS", f"Person {j % 3}") for j in range(THREADS * 2)]

    with llm_memory(store, embedder, llm, tmp_path) as mem:

        def worker(i: int) -> None:
            for r in range(2):
                s, p, o = said[i * 2 + r]
                result = mem.add(f"thread {i} round {r}: <<{s}|{p}|{o}>>", USER)
                assert result.extraction_error is None and not result.errors

        run_threads(worker, THREADS)
        facts = {(f.subject, f.predicate, f.object): f.mentions for f in mem.get_all(USER)}
        assert facts == dict(Counter(said))
        hub = mem.entity("Hub", USER).entity
        assert hub.mentions == len(said)
        assert duplicate_keys(store, USER) == [] and half_written(store, USER) == []
        assert mem.stats(USER).episodes == len(said)
    tally.cases += len(said)


PROCESS = textwrap.dedent(
    """
    import sys, threading, time
    from pathlib import Path
    from engine import Memory
    from tests.integration.reliability.test_concurrency import calls_of, USER
    data_dir, first = sys.argv[1], int(sys.argv[2])
    mem = Memory(data_dir=data_dir)
    mem.add_facts([("Warm", "UP", f"process {first}")], "warmup")
    print("ready", flush=True)
    while not (Path(data_dir) / "go").exists():
        time.sleep(0.01)
    def work(i):
        for call in calls_of(i):
            mem.add_facts(call, USER)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(first, first + 4)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    print("done", flush=True)
    mem.close()
    """
)


def test_two_processes_of_four_threads_add_overlapping_facts(tmp_path: Path, tally: Tally) -> None:
    root = str(Path(__file__).resolve().parents[3])
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", PROCESS, str(tmp_path), str(first)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=root,
        )
        for first in (0, 4)
    ]
    for proc in procs:  # both loaded and connected: start them together
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    (tmp_path / "go").touch()
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0 and "done" in out, err
    with Memory(data_dir=tmp_path) as mem:
        tally.lost += assert_exact(mem, range(THREADS))
    tally.cases += THREADS * ROUNDS


def both_read_before_either_writes(store: GraphStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hold each of two writers' batch until both have one: each read what was stored
    before the other wrote (the race, made certain)."""
    both = threading.Barrier(2, timeout=60)
    write = store.write

    def held(user_id: str, batch: WriteBatch) -> Written:
        both.wait()
        return write(user_id, batch)

    monkeypatch.setattr(store, "write", held)


def history_events(store: GraphStore, uids: list[str]) -> dict[str, list[str]]:
    """The events of each fact's or entity's change history, sorted."""
    params = {"user_id": USER, "after": "", "limit": 10_000}
    events: dict[str, list[str]] = {uid: [] for uid in uids}
    for (row,) in store.run("list_user_history", params):
        if row["target_uid"] in events:
            events[row["target_uid"]].append(row["event"])
    return {uid: sorted(found) for uid, found in events.items()}


def _said_at_once(
    said: list[tuple[str, str, str]],
    parts: tuple[GraphStore, Embedder, Path],
    monkeypatch: pytest.MonkeyPatch,
    read: Callable[[Memory], list[Any]],
) -> tuple[list[AddResult], list[Any]]:
    """Two messages saying `said`, added at once, each read before either wrote; what `read`
    finds after them."""
    store, embedder, tmp_path = parts
    text = "; ".join(f"{s} owns {o}" for s, _, o in said)
    with (
        ScriptedLLM(default=lambda _: ToolCall(extraction(said))) as llm,
        llm_memory(store, embedder, llm, tmp_path) as mem,
    ):
        both_read_before_either_writes(store, monkeypatch)
        results: list[AddResult] = []
        run_threads(lambda i: results.append(mem.add(f"message {i}: {text}", USER)), 2)
        return results, read(mem)


def _facts(mem: Memory) -> list[Any]:
    return list(mem.get_all(USER))


def _entities(mem: Memory) -> list[Any]:
    return [se.entity for se in mem.top_entities(USER, 1000)]


def test_two_writers_of_the_same_new_facts_add_each_once(
    memory: Memory, monkeypatch: pytest.MonkeyPatch, tally: Tally
) -> None:
    both_read_before_either_writes(memory.store, monkeypatch)
    results = []
    run_threads(lambda _: results.append(memory.add_facts(NEW_FACTS, USER)), 2)
    stored = memory.get_all(USER)
    assert len(stored) == len(NEW_FACTS) and {f.mentions for f in stored} == {2}
    assert sum(r.facts_added for r in results) == len(stored)
    assert [r.facts_added + r.facts_updated for r in results] == [len(NEW_FACTS)] * 2
    uids = [f.uid for f in stored]
    assert history_events(memory.store, uids) == {uid: ["ADD"] for uid in uids}
    tally.cases += 2 * len(NEW_FACTS)


def test_two_messages_saying_the_same_new_facts_at_once_add_each_once(
    store: GraphStore,
    embedder: Embedder,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    tally: Tally,
) -> None:
    said = NEW_FACTS[:12]
    results, stored = _said_at_once(said, (store, embedder, tmp_path), monkeypatch, _facts)
    assert [(r.extraction_error, r.errors) for r in results] == [(None, [])] * 2
    assert len(stored) == len(said) and {f.mentions for f in stored} == {2}
    assert sum(r.facts_added for r in results) == len(stored)
    assert [r.facts_added + r.facts_updated for r in results] == [len(said)] * 2
    uids = [f.uid for f in stored]
    # the other message said each fact again, as a message after it would have
    assert history_events(store, uids) == {uid: ["ADD", "UPDATE"] for uid in uids}
    tally.cases += 2 * len(said)


def test_two_writers_of_the_same_new_entities_add_each_once(
    memory: Memory, monkeypatch: pytest.MonkeyPatch, tally: Tally
) -> None:
    both_read_before_either_writes(memory.store, monkeypatch)
    results = []
    run_threads(lambda _: results.append(memory.add_facts(NEW_FACTS, USER)), 2)
    stored = [se.entity for se in memory.top_entities(USER, 1000)]
    named = {entity_key(n) for s, _, o in NEW_FACTS for n in (s, o)}
    assert {e.key for e in stored} == named and duplicate_keys(memory.store, USER) == []
    assert sum(r.entities_added for r in results) == len(named)
    # each entity's ADD event recorded once, by the writer that created it (as an add does)
    uids = [e.uid for e in stored]
    assert history_events(memory.store, uids) == {uid: ["ADD"] for uid in uids}
    tally.cases += 2 * len(named)


def test_two_loads_of_the_same_new_facts_at_once_add_each_once(
    memory: Memory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, tally: Tally
) -> None:
    """Two files giving the same facts, loaded at once: both loads reported every fact and
    entity added and wrote an ADD event for each fact."""
    files = [tmp_path / f"kb{i}.tsv" for i in range(2)]
    for path in files:
        path.write_text("".join(f"{s}\t{p}\t{o}\n" for s, p, o in NEW_FACTS), encoding="utf-8")
    both_read_before_either_writes(memory.store, monkeypatch)
    reports: list[LoadReport] = []
    run_threads(lambda i: reports.append(memory.load(files[i], USER)), 2)
    stored = memory.get_all(USER)
    named = {entity_key(n) for s, _, o in NEW_FACTS for n in (s, o)}
    assert len(stored) == len(NEW_FACTS) and duplicate_keys(memory.store, USER) == []
    assert sum(r.facts_added for r in reports) == len(stored)
    assert sum(r.entities_added for r in reports) == len(named)
    uids = [f.uid for f in stored]
    assert history_events(memory.store, uids) == {uid: ["ADD"] for uid in uids}
    tally.cases += 2 * len(NEW_FACTS)


def test_two_messages_naming_the_same_new_entities_at_once_add_each_once(
    store: GraphStore,
    embedder: Embedder,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    tally: Tally,
) -> None:
    said = NEW_FACTS[:12]
    results, stored = _said_at_once(said, (store, embedder, tmp_path), monkeypatch, _entities)
    assert [(r.extraction_error, r.errors) for r in results] == [(None, [])] * 2
    assert len(stored) == 2 * len(said) and duplicate_keys(store, USER) == []
    assert sum(r.entities_added for r in results) == len(stored)
    uids = [e.uid for e in stored]
    assert history_events(store, uids) == {uid: ["ADD"] for uid in uids}
    tally.cases += 2 * len(stored)


def test_two_imports_of_one_file_at_once_report_each_record_new_once(
    memory: Memory, monkeypatch: pytest.MonkeyPatch, tally: Tally
) -> None:
    """Two imports of one export at once into a user holding nothing stored each record once,
    but both reported every record new: each counted from what it read before either wrote."""
    memory.add_facts(NEW_FACTS, "exporter")
    memory.add("Owner 3 lent me Thing 7 yesterday.", "exporter")
    exported = parse_snapshot(memory.export("exporter"))
    both_read_before_either_writes(memory.store, monkeypatch)
    reports: list[ImportReport] = []
    run_threads(lambda _: reports.append(memory.import_(exported, user_id=USER)), 2)
    stored = read_snapshot(memory.store, USER)
    kinds = ("entities", "facts", "episodes", "history")
    assert [len(getattr(stored, kind)) for kind in kinds] == [
        len(getattr(exported, kind)) for kind in kinds
    ]
    assert duplicate_keys(memory.store, USER) == [] and stored.episodes
    for kind in kinds:
        new = [getattr(report, f"{kind}_new") for report in reports]
        held = [getattr(report, f"{kind}_held") for report in reports]
        assert sum(new) == len(getattr(stored, kind)), (kind, new)
        assert [n + h for n, h in zip(new, held, strict=True)] == [len(getattr(stored, kind))] * 2
    tally.cases += 2 * len(NEW_FACTS)
