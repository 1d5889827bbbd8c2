"""Reading RDF N-Triples for `graphmem load`: statements parsed as the W3C grammar writes them,
entities named by the labels the file gives (or their IRIs' local names), label lines counted
as names, not facts, and a bad line named. No store is needed: the lines are only read."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from engine.errors import InvalidInputError
from engine.load.lines import Naming
from engine.load.ntriples import parse_statement
from engine.load.read import Limits, LineError, Triple, read_triples, triple_format

LIMITS = Limits(max_name_chars=512, max_text_chars=4000)
LABEL = "<http://www.w3.org/2000/01/rdf-schema#label>"
DBR = "http://dbpedia.org/resource/"
WD = "http://www.wikidata.org/entity/"
XSD = "http://www.w3.org/2001/XMLSchema#"
FILE = f"""# a small graph
<{DBR}Barack_Obama> <http://dbpedia.org/ontology/birthPlace> <{DBR}Honolulu> .
<{DBR}Barack_Obama> <http://dbpedia.org/ontology/birthDate> "1961-08-04"^^<{XSD}date> .
<{WD}Q1> {LABEL} "Springfield"@en .
<{WD}Q1> {LABEL} "Springfield (de)"@de .
<{WD}Q2> {LABEL} "Springfield" .
<{WD}Q3> {LABEL} "Homer"@fr .
<{WD}Q3> <{WD}P551> <{WD}Q1> .
<{WD}P551> {LABEL} "residence"@en .
<{WD}Q3> <http://schema.org/knows> _:someone .
<{WD}Q3> <http://schema.org/description> "says \\"D\\u00f6h\\"\\tloudly" .
not a statement at all
"""  # fmt: skip


def _read(tmp_path: Path, text: str, name: str = "kb.nt") -> list[Triple | LineError | Naming]:
    path = tmp_path / name
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode("utf-8")))
    else:
        path.write_text(text, encoding="utf-8")
    return list(read_triples(path, triple_format(path), LIMITS))


@pytest.mark.parametrize("name", ["kb.nt", "kb.ntriples", "kb.nt.gz"])
def test_entities_are_named_by_their_labels_or_local_names(tmp_path: Path, name: str) -> None:
    items = _read(tmp_path, FILE, name)

    facts = [(t.line, t.subject, t.predicate, t.object) for t in items if isinstance(t, Triple)]
    assert facts == [
        (2, "Barack Obama", "BIRTH_PLACE", "Honolulu"),
        (3, "Barack Obama", "BIRTH_DATE", "1961-08-04"),
        (8, "Homer", "RESIDENCE", "Springfield (Q1)"),
        (11, "Homer", "DESCRIPTION", 'says "Döh" loudly'),
    ]
    assert [i.line for i in items if isinstance(i, Naming)] == [4, 5, 6, 7, 9]
    errors = {i.line: i.reason for i in items if isinstance(i, LineError)}
    assert set(errors) == {10, 12}
    assert "blank node _:someone has no label" in errors[10]
    assert errors[12].startswith("not an N-Triples statement")


def test_the_fact_text_says_the_relation_in_words(tmp_path: Path) -> None:
    (fact,) = [t for t in _read(tmp_path, FILE.splitlines()[1] + "\n") if isinstance(t, Triple)]
    assert fact.text == "Barack Obama birth place Honolulu"


def test_a_labelled_blank_node_is_an_entity(tmp_path: Path) -> None:
    text = f'_:b0 {LABEL} "Marge" .\n<{WD}Q3> <http://schema.org/spouse> _:b0 .\n'
    facts = [t for t in _read(tmp_path, text) if isinstance(t, Triple)]
    assert [(t.subject, t.object) for t in facts] == [("Q3", "Marge")]


@pytest.mark.parametrize(
    "line",
    [
        '<a> <b> "open .',  # an unclosed literal
        "<a> <b> <c>",  # no final dot
        '"a" <b> <c> .',  # a literal subject
        "<a> _:b <c> .",  # a blank predicate
        "<a b> <c> <d> .",  # a space in an IRI
    ],
)
def test_a_line_that_is_not_a_statement_is_refused(line: str) -> None:
    with pytest.raises(InvalidInputError, match="not an N-Triples statement"):
        parse_statement(line)


def test_comments_and_blank_lines_are_not_statements() -> None:
    assert parse_statement("   # a comment") is None
    assert parse_statement("<a> <b> <c> . # said after") is not None


def test_a_delimiter_is_refused_for_ntriples(tmp_path: Path) -> None:
    path = tmp_path / "kb.nt"
    path.write_text(f"<{DBR}A> <{DBR}b> <{DBR}C> .\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="N-Triples has no delimiter"):
        list(read_triples(path, "nt", LIMITS, "|"))


def test_a_broken_gzip_file_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "kb.nt.gz"
    path.write_bytes(gzip.compress(FILE.encode("utf-8"))[:-40])
    with pytest.raises(InvalidInputError, match="a broken gzip file"):
        list(read_triples(path, "nt", LIMITS))


@pytest.mark.parametrize("name", ["kb.nt", "kb.nt.gz", "kb.tsv"])
def test_a_byte_order_mark_is_not_part_of_the_first_line(tmp_path: Path, name: str) -> None:
    first = f"<{DBR}Paris> <{DBR}capitalOf> <{DBR}France> ."
    text = "Paris\tCAPITAL_OF\tFrance" if name == "kb.tsv" else first
    items = _read(tmp_path, "\ufeff" + text + "\r\n", name)

    assert [(t.subject, t.predicate, t.object) for t in items if isinstance(t, Triple)] == [
        ("Paris", "CAPITAL_OF", "France")
    ]
