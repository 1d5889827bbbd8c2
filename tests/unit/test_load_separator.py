"""A file of triples read with the wrong separator: each line is one column, and its error says
which separator the line holds and what to pass (`graphmem load` printed thousands of "expected
3 or 4 columns, got 1" and no way out). No store is needed: the lines are only read."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.load.read import Limits, LineError, read_triples, triple_format

LIMITS = Limits(max_name_chars=512, max_text_chars=4000)
CASES = {
    "pipes as tsv": ("kb.txt", "Alice|LIVES_IN|Paris", None, "'|'", "pass --delimiter '|'"),
    "semicolons as csv": ("kb.csv", "Alice;LIVES_IN;Paris;", None, "';'", "pass --delimiter ';'"),
    "tabs as csv": ("kb.csv", "Alice\tLIVES_IN\tParis", None, "'\\t'", "pass --format tsv"),
    "commas as tsv": ("kb.tsv", "Alice,LIVES_IN,Paris", None, "','", "pass --format csv"),
    "tabs with another delimiter": (
        "kb.tsv", "Alice\tLIVES_IN\tParis", "|", "'\\t'", "leave out --delimiter"
    ),
}  # fmt: skip


def _errors(path: Path, delimiter: str | None) -> list[str]:
    lines = read_triples(path, triple_format(path), LIMITS, delimiter)
    return [line.reason for line in lines if isinstance(line, LineError)]


@pytest.mark.parametrize("name, line, delimiter, holds, option", CASES.values(), ids=list(CASES))
def test_a_line_of_one_column_names_the_separator_it_holds(
    tmp_path: Path, name: str, line: str, delimiter: str | None, holds: str, option: str
) -> None:
    path = tmp_path / name
    path.write_text(f"{line}\n{line}\n", encoding="utf-8")

    errors = _errors(path, delimiter)

    expected = (
        "expected 3 or 4 columns (subject, predicate, object[, text]), got 1; "
        f"the line holds {holds}: is that the separator? ({option})"
    )
    assert errors == [expected, expected]


def test_a_line_of_one_column_with_no_separator_says_no_more(tmp_path: Path) -> None:
    path = tmp_path / "kb.tsv"
    path.write_text("Alice lives in Paris, France\n", encoding="utf-8")

    assert _errors(path, None) == [
        "expected 3 or 4 columns (subject, predicate, object[, text]), got 1"
    ]
