"""The README as a newcomer follows it: its code blocks as written, top to bottom, in a fresh
data dir given as a relative path (`GRAPHMEM_HOME=mem`).

The ```python blocks run in order in one interpreter; a line `expression   # 'value'` must give
that value. Then every `graphmem ...` line of the ```sh blocks runs in a shell, beside small
files of the names the lines use (kb.tsv, logs/*.jsonl, ...): an optional `[--flag value]` runs
without it and with it, FACT_UID stands for a fact the earlier lines stored, and each line must
exit 0 (and print JSON with `--json`). Lines that need what this machine lacks are named in
`NOT_HERE` with the reason, and printed.

Pages of docs/ whose examples a newcomer found wrong are run too: a block followed by its
answer as a `# {...}` comment must answer with every `"key": "value"` the comment shows
(values cut short with `...` are not compared).
"""

from __future__ import annotations

import ast
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests import chatgpt_export, claude_export, slack_export

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"```(?P<lang>\w+)\n(?P<body>.*?)```", re.S)
EXPECTED = re.compile(r"^(?P<code>[^#]+?)\s+#\s+(?P<value>'.*'|\".*\")\s*$")
OPTIONAL = re.compile(r"\s\[(--[^\]]+)\]")
ANSWER_PAIR = re.compile(r'"(?P<key>\w+)": "(?P<value>[^".]+)"')
NOT_HERE = {
    "make ": "the test suite itself runs under `make test`",
    "graphmem mcp": "a server; tests/integration/test_mcp.py and security/test_mcp_doors.py run it",
    "../shared/": "the dev data set is not shipped; tests/integration/test_ingest.py reads LoCoMo",
    "GRAPHMEM_LLM_PROVIDER=": "needs a local LLM server (make test-llm runs llama.cpp)",
    "OPENAI_API_KEY=sk": "needs an OpenAI key",
}
FILES = {
    "kb.tsv": "Alice\tFRIEND_OF\tJohn\nJohn\tOWNS\tTommy\tJohn has a dog named Tommy\n",
    "kb.csv": "subject,predicate,object\nParis,CAPITAL_OF,France\n",
    "facts.jsonl": '{"subject": "Rome", "predicate": "capital of", "object": "Italy"}\n',
    "kb.txt": "Berlin|CAPITAL_OF|Germany\n",
    "chat.jsonl": '{"role": "user", "content": "I adopted a cat named Felix"}\n',
    "logs/monday.jsonl": '{"role": "user", "content": "I started learning the cello"}\n',
    "logs/friday.jsonl": '{"role": "user", "content": "My sister Ana lives in Porto"}\n',
    "WhatsApp Chat with Bob.txt": "12/30/23, 9:15 PM - Bob: I moved to Lisbon last week!\n",
    "telegram-export/result.json": json.dumps(
        {"name": "Bob", "type": "personal_chat", "id": 1, "messages": [
            {"id": 1, "type": "message", "date_unixtime": "1703970903", "from": "Bob",
             "text": "I play the cello"}]}
    ),
    "discord-export/friends - general [5].json": json.dumps(
        {"guild": {"id": "1", "name": "friends"}, "channel": {"id": "5", "name": "general"},
         "messages": [{"id": "9", "type": "Default", "timestamp": "2023-12-30T21:15:03+00:00",
                       "content": "I moved to Porto", "author": {"id": "2", "name": "bob"}}]}
    ),
}  # fmt: skip
# what `graphmem load` reads gzip-compressed: bytes, not text
COMPRESSED = {
    "wikidata.nt.gz": '<http://www.wikidata.org/entity/Q1> <http://schema.org/name> "Rome" .\n'
    "<http://www.wikidata.org/entity/Q1> <http://www.wikidata.org/prop/direct/P17> "
    "<http://www.wikidata.org/entity/Q38> .\n",
}
# the unpacked chat exports the README ingests, as the samples the readers are tested on
EXPORTS: dict[str, ModuleType] = {
    "chatgpt-export": chatgpt_export,
    "claude-export": claude_export,
    "slack-export": slack_export,
}

pytestmark = pytest.mark.slow


def _blocks(lang: str, page: str = "README.md") -> list[str]:
    text = (ROOT / page).read_text(encoding="utf-8")
    return [m["body"] for m in FENCE.finditer(text) if m["lang"] == lang]


def _checked(line: str) -> str:
    """`expr   # 'value'` as an assertion; any other line as it is."""
    match = EXPECTED.match(line)
    if not match:
        return line
    code = match["code"].strip()
    try:
        ast.parse(code, mode="eval")
    except SyntaxError:
        return line
    indent = line[: len(line) - len(line.lstrip())]
    return f"{indent}assert ({code}) == {match['value']}, repr({code})"


def _commands() -> list[str]:
    """Each `graphmem` line of the sh blocks, without its comment, and each optional flag
    both left out and given."""
    lines = []
    for block in _blocks("sh"):
        for raw in block.splitlines():
            line = raw.split("  #")[0].strip()
            why = next((why for key, why in NOT_HERE.items() if key in line), None)
            if why or "graphmem" not in line:
                if why:
                    print(f"not run here ({why}): {line}")
                continue
            lines.append(OPTIONAL.sub("", line))
            if OPTIONAL.search(line):
                lines.append(OPTIONAL.sub(r" \1", line))
    return lines


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "GRAPHMEM_"))}
    bin_dir = str(Path(sys.executable).parent)
    return {**env, "GRAPHMEM_HOME": "mem", "PATH": f"{bin_dir}{os.pathsep}{env['PATH']}"}


def _run(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, shell=True, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=600
    )


def _a_fact_of(user: str, cwd: Path) -> str:
    done = _run(f"graphmem search 'Berlin' --user {user} --json", cwd)
    return str(json.loads(done.stdout)["facts"][0]["fact"]["uid"])


def test_the_readme_runs_as_written(tmp_path: Path) -> None:
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    for name, text in COMPRESSED.items():
        (tmp_path / name).write_bytes(gzip.compress(text.encode("utf-8")))
    for folder, sample in EXPORTS.items():
        sample.write_export(tmp_path / folder)
        shutil.make_archive(str(tmp_path / folder), "zip", tmp_path / folder)  # as sent
    script = "\n".join(_checked(line) for block in _blocks("python") for line in block.splitlines())

    python = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=_env(),
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip

    assert python.returncode == 0, python.stderr[-3000:]
    assert (tmp_path / "mem").is_dir(), "the relative data dir is made under the cwd"
    for command in _commands():
        if "FACT_UID" in command:
            command = command.replace("FACT_UID", _a_fact_of("alice", tmp_path))
        done = _run(command, tmp_path)
        assert done.returncode == 0, f"{command}\n{done.stdout[-1500:]}\n{done.stderr[-1500:]}"
        if "--json" in command.split():
            json.loads(done.stdout)


def _printing_its_answer(block: str) -> str:
    """The block without its answer comment, printing as JSON the value of its last
    expression statement (the call whose answer the comment shows)."""
    code = "\n".join(line for line in block.splitlines() if not line.startswith("#"))
    tree = ast.parse(code)
    last = max((n for n in ast.walk(tree) if isinstance(n, ast.Expr)), key=lambda n: n.lineno)
    lines = code.splitlines()
    line = lines[last.lineno - 1]
    indent = len(line) - len(line.lstrip())
    lines[last.lineno - 1] = f"{line[:indent]}_answer = {line[indent:]}"
    return "\n".join([*lines, "import json", "print(json.dumps(_answer, default=str))"])


def _pairs(value: object) -> set[tuple[str, str]]:
    """Every `key: text` pair of the dicts anywhere in `value`."""
    if isinstance(value, dict):
        own = {(k, v) for k, v in value.items() if isinstance(v, str)}
        return own.union(*(_pairs(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_pairs(v) for v in value))
    return set()


def test_the_mem0_quick_start_answers_as_documented(tmp_path: Path) -> None:
    """docs/migrate_from_mem0.md showed "USER likes hiking"; the user's entity is named
    after the user id, and the page's answer has to say what a newcomer gets."""
    block = _blocks("python", "docs/migrate_from_mem0.md")[0]
    comment = " ".join(line for line in block.splitlines() if line.startswith("# "))
    documented = {(m["key"], m["value"]) for m in ANSWER_PAIR.finditer(comment)}

    done = subprocess.run(
        [sys.executable, "-c", _printing_its_answer(block)], cwd=tmp_path, env=_env(),
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr[-3000:]
    assert documented >= {("memory", "alice123 likes hiking"), ("source", "alice123")}
    assert documented <= _pairs(json.loads(done.stdout.splitlines()[-1])), done.stdout
