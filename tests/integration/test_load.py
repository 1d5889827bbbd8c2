"""`graphmem load`: every format, each kind of bad line, idempotence, the CLI, and resume
after `kill -9` of a real `graphmem load`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.cli import main
from engine.errors import InvalidInputError
from engine.load import LoadProgress
from engine.load.state import state_path
from engine.memory import Memory
from engine.store.base import GraphStore
from engine.store.falkordb import FalkorDBStore
from engine.store.falkordb_server import EmbeddedServer
from engine.store.reads import Reads

TRIPLES = [
    ("Kismet", "directed_by", "William Dieterle"),
    ("Kismet", "starred_actors", "Marlene Dietrich"),
    ("Kismet", "release_year", "1944"),
    ("The Scarlet Empress", "starred_actors", "Marlene Dietrich"),
    ("The Scarlet Empress", "directed_by", "Josef von Sternberg"),
]


def tsv(path: Path, rows: list[str]) -> Path:
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def good_rows(sep: str = "\t") -> list[str]:
    return [sep.join(t) for t in TRIPLES]


def test_tsv_loads_and_search_finds_it(memory: Memory, tmp_path: Path) -> None:
    report = memory.load(tsv(tmp_path / "kb.tsv", good_rows()), "u1")
    assert (report.facts_added, report.entities_added, report.error_count) == (5, 6, 0)
    stats = memory.stats("u1")
    assert (stats.facts, stats.entities) == (5, 6)
    hits = memory.search("who directed Kismet", user_id="u1").facts
    assert hits[0].fact.text == "Kismet directed by William Dieterle"
    history = memory.history(hits[0].fact.uid, "u1")
    assert [e.event for e in history] == ["ADD"]


def test_csv_with_header_quotes_and_a_text_column(memory: Memory, tmp_path: Path) -> None:
    path = tsv(
        tmp_path / "kb.csv",
        [
            "subject,predicate,object,text",
            '"Kismet, the film",directed_by,William Dieterle,',
            'Kismet,has_tags,"romance, drama","Kismet is tagged ""romance, drama"""',
        ],
    )
    report = memory.load(path, "u1")
    assert (report.facts_added, report.error_count, report.lines_read) == (2, 0, 2)
    texts = sorted(f.text for f in memory.get_all("u1"))
    assert texts == [
        'Kismet is tagged "romance, drama"',
        "Kismet, the film directed by William Dieterle",
    ]


def test_jsonl_objects_and_arrays(memory: Memory, tmp_path: Path) -> None:
    rows = [
        json.dumps({"subject": "Kismet", "predicate": "directed_by", "object": "W. Dieterle"}),
        json.dumps(["Kismet", "in_language", "English", "Kismet is in English"]),
    ]
    report = memory.load(tsv(tmp_path / "kb.jsonl", rows), "u1")
    assert (report.facts_added, report.error_count) == (2, 0)


def test_each_bad_line_is_named_and_the_rest_loads(memory: Memory, tmp_path: Path) -> None:
    path = tmp_path / "kb.tsv"
    rows = [
        "\t".join(TRIPLES[0]),
        "only\ttwo",  # line 2
        "a\tb\tc\td\te",  # line 3
        "Kismet\t123 not a predicate\tX",  # line 4
        "x" * 600 + "\tdirected_by\tSomeone",  # line 5: over max_name_chars (512)
        "Kismet\tdirected_by\t   ",  # line 6
        "\t".join(TRIPLES[1]),
    ]
    data = (
        "\n".join(rows).encode()
        + b"\nKismet\tdirected_by\t\xff\xfe bad\n"
        + b"\t".join(t.encode() for t in TRIPLES[2])
    )
    path.write_bytes(data)
    report = memory.load(path, "u1")
    assert report.facts_added == 3 and report.error_count == 6
    assert (
        report.errors[0]
        == f"{path}:2: expected 3 or 4 columns (subject, predicate, object[, text]), got 2"
    )
    assert (
        report.errors[1].startswith(f"{path}:3: expected 3 or 4 columns")
        and "got 5" in report.errors[1]
    )
    assert report.errors[2].startswith(f"{path}:4: ") and "predicate" in report.errors[2]
    assert report.errors[3] == f"{path}:5: subject has 600 characters; the limit is 512"
    assert report.errors[4] == f"{path}:6: object is empty or only whitespace"
    assert report.errors[5].startswith(f"{path}:8: not UTF-8 text")


def test_malformed_json_and_csv_lines(memory: Memory, tmp_path: Path) -> None:
    rows = [
        '{"subject": "Kismet", "predicate": "directed_by"',
        '{"subject": "a", "predicate": "p", "object": "b", "when": 1}',
        '["a", "p", 3]',
        # JSON escapes a file cannot hold raw: refused, as add_facts refuses them
        '{"subject": "a\\u0000b", "predicate": "p", "object": "b"}',
        '["a", "p", "b\\ud800"]',
    ]
    path = tsv(tmp_path / "kb.jsonl", rows)
    report = memory.load(path, "u1")
    assert report.facts_added == 0
    assert report.errors[3] == f"{path}:4: subject holds a NUL character, which cannot be stored"
    assert report.errors[4] == (
        f"{path}:5: object is not valid Unicode text (a lone surrogate at 1)"
    )
    assert report.errors[0].startswith(f"{path}:1: malformed JSON at column ")
    assert (
        report.errors[1]
        == f"{path}:2: unknown keys when; expected ('subject', 'predicate', 'object', 'text')"
    )
    assert report.errors[2] == f"{path}:3: subject, predicate, object and text must be strings"
    path = tsv(tmp_path / "kb.csv", ['Kismet,directed_by,"open quote', "a,b_c,d"])
    bad_csv = memory.load(path, "u1")
    assert bad_csv.facts_added == 1 and bad_csv.errors[0].startswith(f"{path}:1: malformed CSV")


def test_a_value_that_is_only_a_lone_surrogate_is_refused_as_one(
    memory: Memory, tmp_path: Path
) -> None:
    """Cleaning turned it into a space first: "subject is empty or only whitespace", "fact
    text is empty or only whitespace", "predicate '\\ud800' cannot be a relationship type"."""
    rows = [
        '["\\ud800", "p", "b"]',
        '{"subject": "a", "predicate": "\\udc00", "object": "b"}',
        '["a", "p", "b", "\\udbff"]',
    ]
    path = tsv(tmp_path / "kb.jsonl", rows)
    report = memory.load(path, "u1")
    assert report.facts_added == 0
    assert report.errors == [
        f"{path}:1: subject is not valid Unicode text (a lone surrogate at 0)",
        f"{path}:2: predicate is not valid Unicode text (a lone surrogate at 0)",
        f"{path}:3: fact text is not valid Unicode text (a lone surrogate at 0)",
    ]


def test_a_file_that_is_not_text_is_refused(memory: Memory, tmp_path: Path) -> None:
    path = tmp_path / "kb.tsv"
    path.write_bytes(b"Kismet\tdirected_by\tW\n\x89PNG\x00\x00\x01binary")
    with pytest.raises(InvalidInputError) as refused:
        memory.load(path, "u1")
    assert str(refused.value) == (
        f"{path}:2: a NUL byte: not a text file; expected TSV, CSV, JSONL or N-Triples"
    )
    assert memory.stats("u1").facts == 0
    with pytest.raises(InvalidInputError, match="cannot tell the format"):
        memory.load(tsv(tmp_path / "kb.xyz", good_rows()), "u1")


def test_loading_again_adds_nothing(memory: Memory, tmp_path: Path) -> None:
    path = tsv(tmp_path / "kb.tsv", [*good_rows(), "\t".join(TRIPLES[0])])  # one said twice
    first = memory.load(path, "u1")
    assert first.facts_added == 5
    kismet = memory.entity("Kismet", "u1")
    assert kismet.entity.mentions == 4
    again = memory.load(path, "u1")
    assert again.already_loaded and again.facts_added == 0
    forced = memory.load(path, "u1", restart=True)
    assert (forced.facts_added, forced.facts_already_stored, forced.entities_added) == (0, 5, 0)
    stats = memory.stats("u1")
    assert (stats.facts, stats.entities) == (5, 6)
    assert memory.entity("Kismet", "u1").entity.mentions == 4


def test_a_load_naming_the_user_by_their_id_writes_to_the_users_own_entity(
    memory: Memory, tmp_path: Path
) -> None:
    """As `add_facts` and `add` take a user's id for the user: a load's "Kismet" for user
    "kismet" was an entity apart from the one "I" names."""
    memory.load(tsv(tmp_path / "kb.tsv", good_rows()), "kismet")
    kismet = memory.entity("Kismet", "kismet").entity
    assert kismet.uid == Memory.self_uid("kismet") and kismet.mentions == 3
    memory.add_facts([("kismet", "SEQUEL_OF", "Kismet 1920")], "kismet")
    assert memory.entity("Kismet", "kismet").entity.mentions == 4


def test_a_load_finds_the_users_entity_keyed_otherwise_by_its_uid(
    store: GraphStore, memory: Memory, tmp_path: Path
) -> None:
    """The user's own entity that no key or alias key of their id names (an older version's)
    must not be made again by a load naming the user: two nodes of one uid."""
    if not isinstance(store, FalkorDBStore):
        pytest.skip("strips an alias key with FalkorDB's own query")
    memory.add_facts([("Kismet", "SEQUEL_OF", "Kismet 1920")], "kismet")
    store._graph.query("MATCH (e:Entity {user_id: 'kismet'}) SET e.alias_keys = [], e.key = 'user'")
    memory.load(tsv(tmp_path / "kb.tsv", good_rows()), "kismet")
    me = Memory.self_uid("kismet")
    mine = [e.entity for e in memory.top_entities("kismet", 20) if e.entity.uid == me]
    assert len(mine) == 1 and mine[0].mentions == 4


class _Stopped(Exception):
    pass


def _stop_after_first_chunk(phase: str) -> Callable[[LoadProgress], None]:
    """A progress callback that interrupts the load once one chunk of `phase` is written."""

    def progress(step: LoadProgress) -> None:
        if step.phase == phase and step.done > 0:
            raise _Stopped

    return progress


def _mentions(memory: Memory, user_id: str) -> dict[str, int]:
    top = memory.top_entities(user_id, k=100, by="frequency")
    return {scored.entity.name: scored.entity.mentions for scored in top}


def test_reruns_of_an_interrupted_load_count_each_mention_once(
    memory: Memory, tmp_path: Path
) -> None:
    """Interrupted in its entities, then rerun on the touched file with another chunk size,
    then with `restart` stopped in its facts, then to its end: each entity's mentions are
    those of one load that ran through (a rerun planned the mentions again and added them)."""
    path = tsv(tmp_path / "kb.tsv", [*good_rows(), "\t".join(TRIPLES[0])])
    assert memory.load(path, "whole").facts_added == 5
    runs = [(2, "entities", False), (3, "entities", False), (2, "facts", True)]
    for number, (chunk_size, phase, restart) in enumerate(runs, start=1):
        os.utime(path, ns=(number * 10**9, number * 10**9))  # touched: another identity
        stop = _stop_after_first_chunk(phase)
        with pytest.raises(_Stopped):
            memory.load(path, "u1", restart=restart, chunk_size=chunk_size, progress=stop)
    os.utime(path, ns=(9 * 10**9, 9 * 10**9))
    last = memory.load(path, "u1", chunk_size=3)
    assert (last.facts_added, last.facts_already_stored) == (3, 2)
    assert _mentions(memory, "u1") == _mentions(memory, "whole")
    assert _mentions(memory, "u1")["Kismet"] == 4
    other = tsv(tmp_path / "other.tsv", ["Kismet\tin_language\tEnglish"])
    assert memory.load(other, "u1").facts_added == 1
    assert _mentions(memory, "u1")["Kismet"] == 5  # another file's facts add their mentions


def test_a_rerun_after_an_edit_counts_once_the_entities_whose_lines_it_kept(
    memory: Memory, tmp_path: Path
) -> None:
    """Lines added at the end after an interrupted run: the entities of the lines kept, which
    that run had written, get their mentions once (each of them got them twice)."""
    path = tsv(tmp_path / "kb.tsv", good_rows())
    with pytest.raises(_Stopped):
        memory.load(path, "u1", chunk_size=2, progress=_stop_after_first_chunk("entities"))
    edited = [*good_rows(), "Casablanca\tdirected_by\tMichael Curtiz"]
    memory.load(tsv(path, edited), "u1", chunk_size=2)
    memory.load(tsv(tmp_path / "whole.tsv", edited), "whole")
    assert _mentions(memory, "u1") == _mentions(memory, "whole")


def test_a_load_read_another_way_is_not_taken_for_done(memory: Memory, tmp_path: Path) -> None:
    """A file read with the wrong separator loads nothing; read again with the one its bad
    lines name (`--delimiter '|'`), it loads. The checkpoint said "already loaded" (exit 0,
    nothing written) once the user held any fact."""
    memory.add_facts([("Casablanca", "directed_by", "Michael Curtiz")], user_id="u1")
    path = tsv(tmp_path / "kb.txt", good_rows("|"))
    wrong = memory.load(path, "u1", format="tsv")
    assert (wrong.facts_added, wrong.error_count) == (0, 5)
    assert "pass --delimiter '|'" in wrong.errors[0]
    right = memory.load(path, "u1", format="tsv", delimiter="|")
    assert not right.already_loaded
    assert (right.facts_added, right.error_count) == (5, 0)
    assert memory.load(path, "u1", format="tsv", delimiter="|").already_loaded


def test_a_load_after_the_users_graph_was_deleted_loads_it_again(
    memory: Memory, tmp_path: Path
) -> None:
    """The checkpoint of a finished load says nothing once the user's graph is deleted."""
    path = tsv(tmp_path / "kb.tsv", good_rows())
    assert memory.load(path, "u1").facts_added == 5
    memory.delete_all("u1")
    again = memory.load(path, "u1")
    assert not again.already_loaded and again.facts_added == 5
    assert memory.stats("u1").facts == 5


def test_a_repeated_line_is_counted_as_a_repeat_not_as_a_fact(
    memory: Memory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repeats = ["\t".join(TRIPLES[0]), "kismet\tDIRECTED_BY\twilliam dieterle", "bad\tline"]
    path = tsv(tmp_path / "kb.tsv", [*good_rows(), *repeats])
    report = memory.load(path, "u1")
    home = str(tmp_path / "home")
    code = main(["--data-dir", home, "load", str(path), "--user", "cli"])
    out = capsys.readouterr().out.splitlines()
    counted = report.facts_added + report.facts_already_stored + report.facts_repeated
    assert (report.lines_read, report.facts_added, report.facts_repeated) == (8, 5, 2)
    assert counted + report.error_count == report.lines_read
    assert memory.stats("u1").facts == 5
    assert code == 1 and out[0].startswith("loaded 5 facts (6 new entities, 0 updated)")
    assert out[1:3] == [
        "0 facts were already stored",
        "2 lines repeated a fact of an earlier line (each fact stored once)",
    ]


def test_a_load_beside_stored_facts_reuses_entities(memory: Memory, tmp_path: Path) -> None:
    memory.add_facts([("kismet", "DIRECTED_BY", "William Dieterle")], user_id="u1")
    report = memory.load(tsv(tmp_path / "kb.tsv", good_rows()), "u1")
    assert (report.facts_added, report.facts_already_stored, report.entities_added) == (4, 1, 4)
    assert memory.stats("u1").entities == 6
    assert memory.entity("Kismet", "u1").entity.name == "kismet"  # the stored one, reused
    assert memory.stats("u2").facts == 0


def test_cli_load_json_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tsv(tmp_path / "kb.txt", [*good_rows("|"), "bad|line"])
    home = str(tmp_path / "home")
    code = main(
        ["--data-dir", home, "--json", "load", str(path), "--user", "cli", "--delimiter", "|"]
    )
    summary = json.loads(capsys.readouterr().out)
    assert code == 1  # a bad line: the rest loaded, but not everything
    assert (summary["facts_added"], summary["error_count"]) == (5, 1)
    assert summary["errors"] == [
        f"{path}:6: expected 3 or 4 columns (subject, predicate, object[, text]), got 2"
    ]
    assert main(["--data-dir", home, "load", str(path), "--user", "cli", "--delimiter", "|"]) == 1
    out = capsys.readouterr().out
    assert "is already loaded" in out and "1 bad line, not loaded:" in out
    assert main(["--data-dir", home, "load", str(tmp_path / "missing.tsv"), "--user", "cli"]) == 1
    assert "graphmem: error: cannot read" in capsys.readouterr().err


@pytest.mark.slow
def test_resume_after_kill_9(tmp_path: Path) -> None:
    home, total = tmp_path / "home", 3000
    rows = [f"Film {i}\tdirected_by\tDirector {i % 700}" for i in range(total)]
    path = tsv(tmp_path / "kb.tsv", rows)
    command = [sys.executable, "-m", "engine.cli", "--data-dir", str(home), "load", str(path)]
    command += ["--user", "u1", "--chunk-size", "200", "--json"]
    env = os.environ | {"HF_HUB_OFFLINE": "1"}
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    store = FalkorDBStore.embedded(EmbeddedServer(home), "graphmem")
    store.setup(384)  # the graph exists before the first count
    reads = Reads(store)
    try:
        deadline = time.monotonic() + 300
        while reads.counts("u1")["facts"] < 400 and time.monotonic() < deadline:
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            time.sleep(0.05)
        process.send_signal(signal.SIGKILL)
        process.wait()
        stopped_at = reads.counts("u1")["facts"]
        assert 400 <= stopped_at < total
        state = json.loads(state_path(home, path, "u1").read_text(encoding="utf-8"))
        assert state["entities_complete"] and not state["done"]
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
        report = json.loads(done.stdout)
        assert report["resumed"] and report["facts_already_stored"] >= stopped_at
        assert report["facts_added"] + report["facts_already_stored"] == total
        assert report["entities_added"] == 0  # every entity was written before the kill
        counts = reads.counts("u1")
        assert (counts["facts"], counts["entities"]) == (total, total + 700)
        assert reads.predicates("u1") == {"DIRECTED_BY": (total, 0)}  # none said in a message
        assert len(reads.list_facts("u1", include_invalid=True, skip=0, limit=total + 10)) == total
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()
        store.close()


def test_a_reader_of_the_progress_that_leaves_does_not_stop_the_load(tmp_path: Path) -> None:
    """`graphmem load ... 2>&1 | head -1`: the progress line after the reader left raised
    BrokenPipeError out of the load, which stopped after its entities, exited 0 and stored no
    fact. The load now goes on unshown and stores everything."""
    home, total = tmp_path / "home", 400
    path = tsv(tmp_path / "kb.tsv", [f"Film {i}\tdirected_by\tDirector {i}" for i in range(total)])
    command = [sys.executable, "-m", "engine.cli", "--data-dir", str(home), "load", str(path)]
    env = os.environ | {"HF_HUB_OFFLINE": "1"}
    process = subprocess.Popen(
        [*command, "--user", "u1"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    assert process.stdout is not None
    process.stdout.readline()  # `head -1`: one line, then the reader is gone
    process.stdout.close()
    assert process.wait(timeout=300) == 0
    store = FalkorDBStore.embedded(EmbeddedServer(home), "graphmem")
    try:
        assert Reads(store).counts("u1")["facts"] == total
    finally:
        store.close()
