"""What a load writes: the entities (with the mentions its new facts add) and the new facts.

Entities go first, each written once with all the mentions the file gives it: FalkorDB
re-indexes a node (its vector included) on every update, so bumping an entity once per chunk
cost a vector insert each time. Each entity row carries a mark per name of the file that
gives it mentions, a digest of the file's lines naming that name (`LoadMark`): the entity
keeps it with the mentions, so a rerun of the same content that plans them again (an
interrupted load whose file was touched since, `--restart`, another chunk size) adds none to
an entity that holds the mark. The digest is of names, not uids, so it still holds when the
entity was imported into another user or took another's names in a merge (which keep the
marks: `cypher/restore_entities.cypher`, `cypher/move_entity_counts.cypher`). Facts already
stored are left alone, so loading a file twice adds nothing. For a user with nothing stored
yet no lookup is needed: every uid derives from the user and the names (`stable_uid`), as
`add_facts` derives them.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace

from engine.load.read import Triple
from engine.models import Entity
from engine.normalize import entity_key, stable_uid
from engine.store.base import EntityRow, FactRow, LoadMark
from engine.store.reads import Reads
from engine.uids import entity_uid

LOOKUP_CHUNK = 1000
MARK_CHARS = 16  # hex digits of an entity's load mark: 64 bits


@dataclass(slots=True)
class Plan:
    entities: list[EntityRow] = field(default_factory=list)  # mentions: what the load adds
    new_entities: set[str] = field(default_factory=set)  # uids of entities to create
    facts: list[FactRow] = field(default_factory=list)  # new facts, in file order
    lines: dict[str, int] = field(default_factory=dict)  # fact uid -> its first line
    stored: int = 0  # facts of the file already stored
    repeated: int = 0  # lines that give a fact an earlier line gave (one fact, more mentions)


def make_plan(
    reads: Reads, user_id: str, triples: list[Triple], *, fresh: bool, now: float
) -> Plan:
    """The plan for `triples`; `fresh` (the user has nothing stored) skips the lookups."""
    names: dict[str, str] = {}
    for t in triples:
        names.setdefault(entity_key(t.subject), t.subject)
        names.setdefault(entity_key(t.object), t.object)
    known = {} if fresh else _known_entities(reads, user_id, list(names))
    uid_of = {k: known[k].uid if k in known else entity_uid(user_id, k) for k in names}
    plan = Plan()
    line_uids: list[str] = []
    facts = _fact_rows(triples, user_id, uid_of, now, plan.lines, line_uids)
    stored = set() if fresh else _stored_facts(reads, user_id, list(facts))
    plan.facts = [row for uid, row in facts.items() if uid not in stored]
    plan.stored, plan.repeated = len(stored), len(triples) - len(facts)
    added: Counter[str] = Counter()  # by name (key): the mentions of the lines of new facts
    for t, uid in zip(triples, line_uids, strict=True):
        if uid not in stored:
            added[entity_key(t.subject)] += 1
            added[entity_key(t.object)] += 1
    said = _lines_naming(triples)
    named: defaultdict[str, list[str]] = defaultdict(list)  # entity uid -> its names here
    for key in names:
        if added[key]:
            named[uid_of[key]].append(key)
    for uid, keys in named.items():
        marks = tuple(LoadMark(_mark(key, said[key]), added[key]) for key in keys)
        total = sum(m.mentions for m in marks)
        held = known.get(keys[0])
        if held is None:
            plan.entities.append(EntityRow(uid, keys[0], names[keys[0]], None, now, total, marks))
            plan.new_entities.add(uid)
        else:  # a stored one (by an alias too): its own key and name, so MERGE finds it;
            # given no vector, written again whole should it be deleted before the write
            aliases = tuple(held.aliases)
            row = EntityRow(uid, held.key, held.name, None, now, total, marks)
            plan.entities.append(replace(row, stored=True, aliases=aliases))
    return plan


def _lines_naming(triples: Iterable[Triple]) -> defaultdict[str, Counter[str]]:
    """The file's lines (their facts stored or not) naming each name (key), by names."""
    said: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for t in triples:
        subject, obj = entity_key(t.subject), entity_key(t.object)
        line = f"{subject}\t{t.predicate}\t{obj}"
        said[subject][line] += 1
        said[obj][line] += 1
    return said


def _mark(key: str, lines: Counter[str]) -> str:
    """The load mark of the name `key`: a rerun of the same content gives the same one,
    whatever is stored by then and whichever entity holds the name (an import into another
    user, a merge); another file gives another unless it names the name in the same lines."""
    said = [key, *sorted(f"{line}:{count}" for line, count in lines.items())]
    return hashlib.sha256("\n".join(said).encode()).hexdigest()[:MARK_CHARS]


def _fact_rows(
    triples: list[Triple],
    user_id: str,
    uid_of: dict[str, str],
    now: float,
    lines: dict[str, int],
    line_uids: list[str],
) -> dict[str, FactRow]:
    """The facts of `triples`, one row per fact; `lines` gets each fact's first line and
    `line_uids` each line's fact."""
    rows: dict[str, FactRow] = {}
    for t in triples:
        subject, obj = uid_of[entity_key(t.subject)], uid_of[entity_key(t.object)]
        uid = stable_uid(user_id, subject, t.predicate, obj)
        line_uids.append(uid)
        previous = rows.get(uid)
        if previous is not None:  # said twice in the file: one fact, two mentions
            rows[uid] = replace(previous, mentions=previous.mentions + 1)
            continue
        rows[uid] = FactRow(uid, subject, obj, t.predicate, t.text, now)
        lines[uid] = t.line
    return rows


def _chunks(items: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(items), LOOKUP_CHUNK):
        yield items[start : start + LOOKUP_CHUNK]


def _known_entities(reads: Reads, user_id: str, keys: list[str]) -> dict[str, Entity]:
    """Stored entities by key (or alias key)."""
    known: dict[str, Entity] = {}
    for part in _chunks(keys):
        known |= reads.entities_by_keys(user_id, part)
    return known


def _stored_facts(reads: Reads, user_id: str, uids: list[str]) -> set[str]:
    stored: set[str] = set()
    for part in _chunks(uids):
        stored |= {f.uid for f in reads.facts_by_uids(user_id, part)}
    return stored
