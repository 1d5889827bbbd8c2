"""The `graphmem` command line through `engine.cli.main` (and one real process): options
before and after the command, what search prints, the editing verbs, exit statuses."""

from __future__ import annotations

import functools
import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from engine.cli import main
from engine.cli import verbs as cli_verbs
from engine.demo import DEMO_QUERIES, DEMO_USER
from engine.embedding import Embedder
from engine.extraction.offline import OfflineExtractor
from engine.memory import Memory
from engine.store.falkordb_server import EmbeddedServer

pytestmark = pytest.mark.skipif(not OfflineExtractor.available(), reason="needs spaCy")
Capture = pytest.CaptureFixture[str]
SECRET = "My password hint is my cat Felix. I live in Paris."


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Path]:
    """One data dir for the module, holding user `u` (one message) and user `kb` (facts).

    Kept fast: a held connection keeps its embedded server up between commands, and every
    command's `Memory` gets the session's embedding model (the real process test loads its
    own)."""
    path = tmp_path_factory.mktemp("cli") / "home"
    keeper = redis.Redis(unix_socket_path=str(EmbeddedServer(path).ensure_running()))
    with pytest.MonkeyPatch.context() as patch:
        for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
            patch.delenv(name, raising=False)
        patch.setattr(cli_verbs, "Memory", functools.partial(Memory, embedder=embedder))
        assert (
            main(["add", SECRET, "--user", "u", "--ts", "2024-03-05", "--data-dir", str(path)]) == 0
        )
        facts = ["--fact", "Alice", "FRIEND_OF", "John", "--fact", "John", "OWNS", "a dog"]
        assert main(["--data-dir", str(path), "add", *facts, "--user", "kb"]) == 0
        yield path
    keeper.close()
    EmbeddedServer(path).stop_if_unused()


def run(home: Path, capsys: Capture, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([*argv, "--data-dir", str(home)])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_and_data_dir_work_after_the_command(home: Path, capsys: Capture) -> None:
    code, out, _ = run(home, capsys, "search", "Who owns a dog?", "--user", "kb", "--json")
    assert code == 0 and json.loads(out)["facts"][0]["fact"]["text"] == "John owns a dog"
    capsys.readouterr()
    assert main(["--json", "--data-dir", str(home), "stats", "--user", "kb"]) == 0
    assert json.loads(capsys.readouterr().out)["facts"] == 2


def test_search_with_a_budget_prints_the_block_an_agent_gets(home: Path, capsys: Capture) -> None:
    """`--max-tokens N` shows what `search(q, max_tokens=N).context()` puts in a prompt."""
    code, out, _ = run(home, capsys, "search", "password hint", "--user", "u", "--max-tokens", "60")
    assert code == 0
    assert out.startswith(("Facts:", "Messages:")) and f"[2024-03-05] user: {SECRET}" in out
    assert len(out.split()) * 4 / 3 <= 60 + 2  # the estimate the block is packed with
    code, out, _ = run(
        home, capsys, "search", "password", "--user", "u", "--max-tokens", "60", "--json"
    )
    assert code == 0 and json.loads(out)["context"].startswith(("Facts:", "Messages:"))
    code, _, err = run(home, capsys, "search", "password", "--user", "u", "--max-tokens", "0")
    assert code == 2 and "--max-tokens" in err


def test_search_prints_dated_facts_and_the_matching_messages(home: Path, capsys: Capture) -> None:
    code, out, _ = run(home, capsys, "search", "password hint", "--user", "u")
    assert code == 0
    facts, messages = out.split("messages:\n")
    assert "[2024-03-05] u's password hint is cat" in facts
    assert f"[2024-03-05] user: {SECRET}" in messages


def test_search_since_and_until_reach_the_search(home: Path, capsys: Capture) -> None:
    later = ["search", "password hint", "--user", "u", "--json", "--since", "2024-04-01"]
    assert json.loads(run(home, capsys, *later)[1])["episodes"] == []
    earlier = ["search", "password hint", "--user", "u", "--json", "--until", "2024-04-01"]
    assert len(json.loads(run(home, capsys, *earlier)[1])["episodes"]) == 1
    code, _, err = run(home, capsys, "search", "x", "--user", "u", "--since", "last week")
    assert code == 2 and "'last week' is no time" in err


def test_demo_answers_json_with_json(home: Path, capsys: Capture) -> None:
    code, out, _ = run(home, capsys, "demo", "--json", "--limit", "1")
    answer = json.loads(out)
    assert code == 0 and answer["user_id"] == DEMO_USER
    assert answer["store"] == f"the data dir {home}"
    assert len(answer["searches"]) == len(DEMO_QUERIES)
    assert all(len(s["facts"]) == 1 for s in answer["searches"])
    assert answer["top_entities"][0]["entity"]["name"] == "Alice"


def test_demo_says_where_its_data_went(home: Path, capsys: Capture) -> None:
    """It wrote demo-alice into ~/.graphmem and never said so."""
    code, out, _ = run(home, capsys, "demo", "--limit", "1")
    lines = out.strip().splitlines()

    assert code == 0
    assert lines[0].endswith(f"for user {DEMO_USER!r} in the data dir {home}")
    assert lines[-1] == (
        f"search it yourself: graphmem --data-dir {home} search 'who is Spider-Man?' "
        f"--user {DEMO_USER}"
    )


def test_users_lists_each_user_with_counts(home: Path, capsys: Capture) -> None:
    code, out, _ = run(home, capsys, "users", "--json")
    users = {u["user_id"]: u for u in json.loads(out)}
    assert code == 0 and {"u", "kb"} <= set(users)
    assert (users["kb"]["entities"], users["kb"]["facts"], users["kb"]["episodes"]) == (3, 2, 0)
    assert users["u"]["episodes"] == 1


def test_an_unknown_user_is_an_error_for_read_commands(home: Path, capsys: Capture) -> None:
    for argv in (
        ["search", "Who owns a dog?", "--user", "bob"],
        ["entities", "--user", "bob"],
        ["stats", "--user", "bob"],
        ["entity", "John", "--user", "bob"],
        ["history", "0" * 32, "--user", "bob"],
    ):
        code, out, err = run(home, capsys, *argv)
        assert (code, out) == (1, ""), argv
        assert err.splitlines()[-1].startswith("graphmem: error: no memories for user 'bob'")


def test_entity_entities_and_history(home: Path, capsys: Capture) -> None:
    code, out, _ = run(home, capsys, "entity", "john", "--user", "kb")
    assert code == 0 and out.startswith("John ") and "John owns a dog" in out
    assert "(2 mentions)" in run(home, capsys, "entities", "--user", "kb")[1]
    assert "(1 mention)" in run(home, capsys, "entities", "--user", "kb")[1]
    uid = json.loads(run(home, capsys, "entity", "John", "--user", "kb", "--json")[1])
    fact = next(f["uid"] for f in uid["facts"] if f["text"] == "John owns a dog")
    code, out, _ = run(home, capsys, "history", fact, "--user", "kb")
    assert code == 0 and "ADD" in out
    code, _, err = run(home, capsys, "entity", "Zorro", "--user", "kb")
    assert (
        code == 1
        and err.splitlines()[-1] == "graphmem: error: user 'kb' has no entity named 'Zorro'"
    )


def test_history_of_a_held_id_without_events_is_empty_and_an_unheld_id_is_not_found(
    home: Path, capsys: Capture, tmp_path: Path
) -> None:
    triples = tmp_path / "kb.tsv"
    triples.write_text("Zoe\tLIKES\tJazz\n", encoding="utf-8")
    assert run(home, capsys, "load", str(triples), "--user", "ld")[0] == 0
    entity = json.loads(run(home, capsys, "entity", "Zoe", "--user", "ld", "--json")[1])
    uid = entity["entity"]["uid"]  # a load records no event of an entity
    quiet = run(home, capsys, "history", uid, "--user", "ld")
    quiet_json = run(home, capsys, "history", uid, "--user", "ld", "--json")
    unknown = run(home, capsys, "history", "f00d", "--user", "ld")
    others = run(home, capsys, "history", uid, "--user", "u")  # u holds a message, not this
    assert quiet[:2] == (0, f"no change of {uid} is recorded for user 'ld'\n")
    assert (quiet_json[0], json.loads(quiet_json[1])) == (0, [])
    assert unknown[:2] == (1, "")
    assert unknown[2].splitlines()[-1] == "graphmem: error: user 'ld' has no fact or entity 'f00d'"
    assert others[:2] == (1, "")
    assert others[2].splitlines()[-1] == f"graphmem: error: user 'u' has no fact or entity {uid!r}"


def test_add_fact_valid_at_dates_the_facts(home: Path, capsys: Capture) -> None:
    facts = ["--fact", "Dana", "WORKS_AT", "Acme", "--fact", "Dana", "LIVES_IN", "Oslo"]
    argv = ["add", *facts, "--valid-at", "2019-03-01", "--user", "va", "--json"]
    assert run(home, capsys, *argv)[0] == 0
    listed = json.loads(run(home, capsys, "entity", "Dana", "--user", "va", "--json")[1])
    assert sorted((f["text"], f["valid_at"]) for f in listed["facts"]) == [
        ("Dana lives in Oslo", "2019-03-01T00:00:00Z"),
        ("Dana works at Acme", "2019-03-01T00:00:00Z"),
    ]
    shown = run(home, capsys, "entity", "Dana", "--user", "va")[1]
    assert "[2019-03-01] Dana works at Acme" in shown


def test_update_delete_and_forget(home: Path, capsys: Capture) -> None:
    assert (
        main(["--data-dir", str(home), "add", "--fact", "Eve", "LIKES", "tea", "--user", "ed"]) == 0
    )
    (fact,) = json.loads(run(home, capsys, "entity", "Eve", "--user", "ed", "--json")[1])["facts"]
    code, out, _ = run(
        home, capsys, "update", fact["uid"], "--user", "ed", "--text", "Eve loves tea"
    )
    assert code == 0 and "Eve loves tea" in out
    code, _, err = run(home, capsys, "delete", "fact", fact["uid"], "--user", "kb")
    assert code == 1 and err.splitlines()[-1] == (
        f"graphmem: error: user 'kb' has no fact {fact['uid']!r}"
    )
    code, out, _ = run(home, capsys, "delete", "entity", "Eve", "--user", "ed", "--json")
    assert code == 0 and json.loads(out)["facts"] == [fact["uid"]]

    hint = json.loads(run(home, capsys, "search", "password hint", "--user", "u", "--json")[1])
    uid = next(h["fact"]["uid"] for h in hint["facts"] if "password" in h["fact"]["text"])
    code, out, _ = run(home, capsys, "delete", "fact", uid, "--user", "u", "--forget")
    assert (code, out.strip()) == (0, "deleted 1 fact, 1 message, 0 entities")
    out = run(home, capsys, "search", "password hint", "--user", "u")[1]
    assert "password" not in out and "messages:" not in out


def test_exit_status_two_for_a_wrong_command_line(home: Path, capsys: Capture) -> None:
    assert run(home, capsys, "search", "--user", "kb")[0] == 2  # no query
    code, _, err = run(home, capsys, "add", "--user", "kb")
    assert (
        code == 2
        and err.strip()
        == "graphmem: error: add: give either TEXT or --fact SUBJECT PREDICATE OBJECT"
    )
    assert main(["--help"]) == 0
    assert "exit status:" in capsys.readouterr().out


def test_a_real_process_with_options_after_the_command_and_a_closed_pipe(home: Path) -> None:
    env = os.environ | {"HF_HUB_OFFLINE": "1", "GRAPHMEM_HOME": str(home)}
    argv = [sys.executable, "-m", "engine.cli", "search", "dog", "--user", "kb", "--json"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and json.loads(done.stdout)["user_id"] == "kb"
    with subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()  # `| head` that has read enough
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=300) == 0
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_an_add_whose_extraction_failed_says_how_to_extract_it_again(
    home: Path, tmp_path: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The LLM down, `graphmem add` ended on "graphmem: error: 1 problem: see above": the
    message was kept for a replay, but nothing said so or how."""
    with socket.socket() as probe:  # a port nothing listens on: the LLM is unreachable
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    data_dir = tmp_path / "down"
    try:
        code, out, err = run(data_dir, capsys, "add", "I moved to Rome", "--user", "ann lee")
    finally:
        EmbeddedServer(data_dir).stop_if_unused()
    assert code == 1 and "1 message stored" in out
    assert err.splitlines()[-1] == (
        "graphmem: error: the message is stored but no fact was extracted from it (see above); "
        f"graphmem ingest --retry-failed --user 'ann lee' --data-dir {data_dir} extracts it again"
    )


def test_entities_by_recency_show_when_each_was_last_seen(home: Path, capsys: Capture) -> None:
    """`--by recency` printed each entity's score, an epoch ("1796642060.648  Alice")."""
    code, out, _ = run(home, capsys, "entities", "--user", "kb", "--by", "recency")
    assert code == 0 and out.strip()
    for line in out.splitlines():
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  \S.* \(\d+ mentions?\)", line), line
    code, out, _ = run(home, capsys, "entities", "--user", "kb", "--by", "frequency")
    assert out.splitlines()[0].split() == ["2", "John", "(2", "mentions)"]
