"""`graphmem load` of RDF N-Triples, as public KG dumps come (gzip-compressed): entities are
named by the file's labels, a question asked in those names finds the facts, and loading the
file again adds nothing."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from engine.cli import main
from engine.memory import Memory

WD = "http://www.wikidata.org/entity/"
DIRECT = "http://www.wikidata.org/prop/direct/"
LABEL = "<http://www.w3.org/2000/01/rdf-schema#label>"
STATEMENTS = [
    f'<{WD}Q76> {LABEL} "Barack Obama"@en .',
    f'<{WD}Q76> {LABEL} "Barack Obama"@de .',
    f'<{WD}Q18094> {LABEL} "Honolulu"@en .',
    f'<{WD}Q13133> {LABEL} "Michelle Obama"@en .',
    f"<{WD}Q76> <{DIRECT}P19> <{WD}Q18094> .",
    f"<{WD}Q76> <{DIRECT}P26> <{WD}Q13133> .",
    f'<{WD}P19> {LABEL} "place of birth"@en .',  # the property, not its direct form
    f'<{WD}P26> {LABEL} "spouse"@en .',
]


def _dump(path: Path) -> Path:
    path.write_bytes(gzip.compress(("\n".join(STATEMENTS) + "\n").encode("utf-8")))
    return path


def test_a_wikidata_dump_loads_in_its_labels_names(memory: Memory, tmp_path: Path) -> None:
    path = _dump(tmp_path / "wikidata.nt.gz")

    report = memory.load(path, "kb")

    assert (report.facts_added, report.names_read, report.error_count) == (2, 6, 0)
    assert report.lines_read == len(STATEMENTS)
    facts = sorted((f.subject, f.predicate, f.object) for f in memory.get_all("kb"))
    assert facts == [
        ("Barack Obama", "PLACE_OF_BIRTH", "Honolulu"),
        ("Barack Obama", "SPOUSE", "Michelle Obama"),
    ]
    hits = memory.search("Where was Barack Obama born?", user_id="kb").facts
    assert hits[0].fact.text == "Barack Obama place of birth Honolulu"
    assert memory.load(path, "kb", restart=True).facts_already_stored == 2


def test_the_cli_says_how_many_labels_named_entities(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _dump(tmp_path / "wikidata.nt.gz")

    code = main(["--data-dir", str(tmp_path / "home"), "load", str(path), "--user", "kb"])

    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert out[0].startswith("loaded 2 facts (3 new entities, 0 updated)")
    assert "6 labels named entities" in out
