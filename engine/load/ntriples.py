"""Reading RDF N-Triples: `<subject> <predicate> <object> .` a line, the format of the public
KG dumps (Wikidata, DBpedia, Freebase).

graphmem names entities, RDF identifies them by IRI, so the file is read twice: first for the
names its label statements give (rdfs:label, skos:prefLabel, schema:name, foaf:name; English
or untagged preferred), then for the facts. A label is a name, not a fact: its line is counted
as a `Naming`. An IRI no label names is called by its local name ("Barack_Obama" in
`http://dbpedia.org/resource/Barack_Obama` is "Barack Obama"); two IRIs the file labels alike
keep their local names in brackets ("John Smith (Q1)", "John Smith (Q2)"), since one name is
one entity. A literal object is a name as written (its datatype and language dropped); a blank
node is named only by a label.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from engine.errors import InvalidInputError
from engine.load.lines import LineError, decoded_lines

_IRI = r'<((?:[^\x00-\x20<>"{}|^`\\]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*)>'
_BLANK = r"_:([^\s.](?:\S*[^\s.])?)"
_LITERAL = r'"((?:[^"\\\n\r]|\\.)*)"(?:\^\^<[^<>\s]*>|@([a-zA-Z]+(?:-[a-zA-Z0-9]+)*))?'
_STATEMENT = re.compile(
    rf"[ \t]*(?:{_IRI}|{_BLANK})[ \t]*{_IRI}[ \t]*(?:{_IRI}|{_BLANK}|{_LITERAL})"
    r"[ \t]*\.[ \t]*(?:#.*)?"
)
_ESCAPE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))")
_ESCAPED = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
LABELS = frozenset(
    {
        "http://www.w3.org/2000/01/rdf-schema#label",
        "http://www.w3.org/2004/02/skos/core#prefLabel",
        "http://schema.org/name",
        "https://schema.org/name",
        "http://xmlns.com/foaf/0.1/name",
    }
)


@dataclass(frozen=True, slots=True)
class Term:
    """A node of a statement: an IRI, a blank node (`_:` and its label) or a literal."""

    value: str
    kind: str  # "iri", "blank" or "literal"
    language: str | None = None


@dataclass(frozen=True, slots=True)
class Statement:
    subject: Term
    predicate: str
    object: Term

    @property
    def is_label(self) -> bool:
        return self.predicate in LABELS and self.object.kind == "literal"


def parse_statement(text: str) -> Statement | None:
    """One line's statement; None for a blank or comment line.

    Raises:
        InvalidInputError: the line is not an N-Triples statement.
    """
    if not text.strip() or text.lstrip().startswith("#"):
        return None
    match = _STATEMENT.fullmatch(text)
    if match is None:
        raise InvalidInputError(
            "not an N-Triples statement (<subject> <predicate> <object> . with IRIs in <>, "
            'blank nodes as _:name, literals in "")'
        )
    s_iri, s_blank, p_iri, o_iri, o_blank, o_text, o_lang = match.groups()
    subject = Term(_unescape(s_iri), "iri") if s_iri is not None else Term(f"_:{s_blank}", "blank")
    if o_iri is not None:
        obj = Term(_unescape(o_iri), "iri")
    elif o_blank is not None:
        obj = Term(f"_:{o_blank}", "blank")
    else:
        obj = Term(_unescape(o_text), "literal", o_lang.lower() if o_lang else None)
    return Statement(subject, _unescape(p_iri), obj)


def read_statements(path: Path) -> Iterator[tuple[int, Statement | LineError | None]]:
    """Each line's number and its statement, None (blank or comment) or error."""
    for number, text in decoded_lines(path):
        if isinstance(text, LineError):
            yield number, text
            continue
        try:
            yield number, parse_statement(text)
        except InvalidInputError as exc:
            yield number, LineError(number, str(exc))


@dataclass(frozen=True, slots=True)
class Names:
    """The names a file's labels give: `of` each IRI or blank node, and `by_local` the label
    of the one labelled IRI with a given local name (Wikidata labels a property `entity/P19`
    and its statements say `prop/direct/P19`)."""

    of: dict[str, str]
    by_local: dict[str, str]


def read_names(path: Path) -> Names:
    """The name of each IRI or blank node the file labels; labels two of them share are told
    apart by each one's local name."""
    best: dict[str, tuple[int, str]] = {}
    for _, statement in read_statements(path):
        if isinstance(statement, Statement) and statement.is_label:
            rank = _language_rank(statement.object.language)
            held = best.get(statement.subject.value)
            if held is None or rank < held[0]:
                best[statement.subject.value] = (rank, statement.object.value.strip())
    shared = Counter(label for _, label in best.values())
    of = {
        node: f"{label} ({local_name(node)})" if shared[label] > 1 else label
        for node, (_, label) in best.items()
    }
    locals_ = Counter(local_name(node) for node in of)
    by_local = {local_name(n): name for n, name in of.items() if locals_[local_name(n)] == 1}
    return Names(of, by_local)


def node_name(term: Term, names: Names) -> str:
    """What the graph calls `term`.

    Raises:
        InvalidInputError: a blank node no label names.
    """
    if term.kind == "literal":
        return term.value
    name = names.of.get(term.value)
    if name is not None:
        return name
    if term.kind == "blank":
        raise InvalidInputError(
            f"the blank node {term.value} has no label (rdfs:label) to name it by"
        )
    return local_name(term.value).replace("_", " ")


def predicate_name(iri: str, names: Names) -> str:
    """The relation an IRI names: its label when the file gives one (or gives one to the only
    IRI of the same local name), else its local name."""
    local = local_name(iri)
    return names.of.get(iri) or names.by_local.get(local) or local


def local_name(iri: str) -> str:
    """The part of an IRI after its last "#" or "/" ("urn:isbn:1" after its last ":"),
    percent-decoded; the whole IRI when nothing follows."""
    trimmed = iri.rstrip("/#")
    separators = "#/" if re.search(r"[#/]", trimmed) else ":"
    local = re.split(f"[{separators}]", trimmed)[-1]
    return unquote(local) if local else iri


def _language_rank(language: str | None) -> int:
    if language is not None and (language == "en" or language.startswith("en-")):
        return 0
    return 1 if language is None else 2


def _unescape(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        code = match.group(1) or match.group(2)
        if code is not None:
            return chr(int(code, 16)) if int(code, 16) <= 0x10FFFF else match.group(0)
        return _ESCAPED.get(match.group(3), match.group(0))

    return _ESCAPE.sub(one, text) if "\\" in text else text
