"""The `graphmem` commands that read one user's memory (`search`, `entities`, `stats`,
`entity`, `history`) or list the store's users (`users`). Each calls one `Memory` method;
`engine.cli` registers them (`register`)."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from typing import Any

from engine.cli.arg_types import TIME_FORMS, count, held_user_arg, text_arg, user_arg, when
from engine.cli.verbs import (
    UsageError,
    check_window,
    emit,
    fact_line,
    open_memory,
    plural,
    require_user,
)
from engine.invisible import escaped, hidden_at
from engine.knowledge import EntityView
from engine.memory.held import held_history
from engine.models import (
    Explanation,
    HistoryEvent,
    ScoredEntity,
    ScoredFact,
    SearchResult,
    Stats,
    fact_day,
)
from engine.prompt_block import block_or_why, nothing_about, said_day
from engine.retrieval.retriever import MODES, WALKING_MODES


def metadata_filter(text: str) -> tuple[str, Any]:
    """`KEY=VALUE`, the value read as JSON when it is (`n=3`, `ok=true`), else as text."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    try:
        return key, json.loads(value)
    except ValueError:
        return key, value


def _hit_line(hit: ScoredFact) -> str:
    legs = "+".join(hit.legs)
    line = f"  {hit.score:.4f}  [{fact_day(hit)}] {hit.fact.text}  [{legs}] {hit.fact.uid}"
    return line + _why(hit.explanation)


def _why(explained: Explanation | None) -> str:
    """With --explain, a line under a hit: its rank and score in each leg, and the path the
    graph walk reached it by."""
    if explained is None:
        return ""
    parts = [f"{leg} #{r.rank} ({r.score:.3f})" for leg, r in explained.legs.items()]
    if explained.anchor:
        parts.append(f"from {explained.anchor} via {' -> '.join(explained.relations)}")
    return "\n        " + "; ".join(parts or ["no leg"])


def search_text(result: SearchResult) -> str:
    """The facts found, the paths joining the entities the query names, then the messages
    found (dated, with their speaker)."""
    lines = ["facts:", *(_hit_line(h) for h in result.facts)] if result.facts else []
    if result.paths:
        lines.append("paths:")
        lines += ["  " + " -> ".join(f.text for f in path.facts) for path in result.paths]
    if result.unknown_names:
        lines.insert(0, nothing_about(result.unknown_names, bool(result.facts or result.episodes)))
    if result.episodes:
        lines.append("messages:")
        for hit in result.episodes:
            line = f"  {hit.score:.4f}  {hit.episode.line()}  {hit.episode.uid}"
            lines.append(line + _why(hit.explanation))
    return "\n".join(lines) or f"(nothing found for user {result.user_id!r})"


def cmd_search(args: argparse.Namespace) -> None:
    check_window(args)
    if args.near and args.mode not in WALKING_MODES:  # refused before the store starts
        raise UsageError(f"search: --near anchors the graph walk: not with --mode {args.mode}")
    with open_memory(args) as mem:
        require_user(mem, args.user)
        result = mem.search(
            args.query,
            user_id=args.user,
            limit=args.limit,
            mode=args.mode,
            since=args.since,
            until=args.until,
            filters=dict(args.filter) if args.filter else None,
            max_tokens=args.max_tokens,
            as_of=args.as_of,
            near=args.near,
            explain=args.explain,
        )
    if args.max_tokens is None:
        emit(args, result.model_dump(mode="json"), search_text(result))
        return
    block = result.context()
    counts = (len(result.facts), len(result.episodes))
    asked = f"user {result.user_id!r} for {result.query!r}"
    text = block_or_why(block, args.max_tokens, counts, asked) or search_text(result)
    emit(args, {**result.model_dump(mode="json"), "context": block}, text)


def cmd_entities(args: argparse.Namespace) -> None:
    with open_memory(args, embedding_preload=False) as mem:
        require_user(mem, args.user)
        top = mem.top_entities(args.user, args.limit, by=args.by)
    lines = [
        f"{_rank_key(s, args.by)}  {s.entity.name}  ({plural(s.entity.mentions, 'mention')})"
        for s in top
    ]
    emit(args, [s.model_dump(mode="json") for s in top], "\n".join(lines) or "(no entities)")


def _rank_key(scored: ScoredEntity, by: str) -> str:
    """What `entities` ranked by, readable: a salience, a count, or when it was last seen (a
    recency score is that time as epoch seconds, which is no help to read)."""
    if by == "recency":
        return f"{datetime.fromtimestamp(scored.score, UTC):%Y-%m-%d %H:%M:%S}"
    if by == "frequency":
        return f"{scored.score:10.0f}"
    return f"{scored.score:10.3f}"


def cmd_stats(args: argparse.Namespace) -> None:
    with open_memory(args, embedding_preload=False) as mem:
        if args.user is not None:
            require_user(mem, args.user)
        stats = mem.stats(args.user)
    emit(args, stats.model_dump(), _stats_text(stats))


def _stats_text(stats: Stats) -> str:
    """The stored counts and the vector indexes still being built. The LLM counters are the
    process's own, always 0 in this command, which calls no LLM: only --json keeps them."""
    counts = stats.model_dump(include={"users", "entities", "facts", "valid_facts", "episodes"})
    lines = [f"{name}: {n}" for name, n in counts.items()]
    lines.append(f"warming: {', '.join(stats.warming) or 'none'}")
    return "\n".join(lines)


def cmd_users(args: argparse.Namespace) -> None:
    with open_memory(args, embedding_preload=False) as mem:
        users = mem.users()
    rows = [f"{'user':<24} {'entities':>9} {'facts':>9} {'valid':>9} {'messages':>9}"]
    rows += [
        f"{_shown_id(u.user_id):<24} {u.entities:>9} {u.facts:>9} {u.valid_facts:>9} "
        f"{u.episodes:>9}"
        for u in users
    ]
    if any(hidden_at(u.user_id) for u in users):
        rows.append(HIDDEN_NOTE)
    text = "\n".join(rows) if users else "(no users in this store)"
    emit(args, [u.model_dump() for u in users], text)


HIDDEN_NOTE = (
    "* the id holds an invisible format character, shown as its code point: an older "
    "version stored it, and nothing new is stored for it. Give it as bash writes it "
    "(--user $'alice\\u200b') to stats, export and delete, or to Memory.delete_all "
    "(docs/limits.md)"
)


def _shown_id(user_id: str) -> str:
    """An id holding an invisible character, escaped and marked: it passes for no other."""
    return f"{escaped(user_id)} *" if hidden_at(user_id) else user_id


def cmd_entity(args: argparse.Namespace) -> None:
    check_window(args)
    with open_memory(args, embedding_preload=False) as mem:
        require_user(mem, args.user)
        view = mem.entity(
            args.name, args.user, limit=args.limit, since=args.since, until=args.until
        )
    emit(args, view.model_dump(mode="json"), _entity_text(view))


def _entity_text(view: EntityView) -> str:
    e = view.entity
    lines = [
        f"{e.name} ({e.type or 'no type'}) {e.uid}",
        f"  {plural(e.mentions, 'mention')}; first seen {said_day(e.first_seen)}, "
        f"last seen {said_day(e.last_seen)}"
        + (f"; also known as {', '.join(e.aliases)}" if e.aliases else ""),
        "facts:" if view.facts else "(no facts)",
        *(f"  {fact_line(f)}  {f.uid}" for f in view.facts),
    ]
    if view.episodes:
        lines.append("messages:")
        lines += [f"  [{said_day(p.ts)}] {p.speaker or p.role}: {p.content}" for p in view.episodes]
    return "\n".join(lines)


def cmd_history(args: argparse.Namespace) -> None:
    with open_memory(args, embedding_preload=False) as mem:
        require_user(mem, args.user)
        events = held_history(mem, args.uid, args.user)
    text = "\n".join(map(_event_line, events)) or (
        f"no change of {args.uid} is recorded for user {args.user!r}"
    )
    emit(args, [e.model_dump(mode="json") for e in events], text)


def _event_line(event: HistoryEvent) -> str:
    detail = f"  {event.detail}" if event.detail else ""
    return f"{event.ts:%Y-%m-%d %H:%M:%S}  {event.event:<10}{detail}"


# -- parsers -------------------------------------------------------------------------------

WHOSE = "the user whose memory to read"
SINCE = f"only what was said or true from then on ({TIME_FORMS})"
UNTIL = f"only what was said or true until then ({TIME_FORMS})"


def register(sub: Any) -> None:
    """Add this module's commands to the `graphmem` subparsers `sub`."""
    search = sub.add_parser("search", help="search one user's memory")
    search.add_argument(
        "query", type=text_arg("the query"), help="what to look for, as a question or words"
    )
    search.add_argument("--user", required=True, type=user_arg, help=WHOSE)
    search.add_argument(
        "--limit",
        type=count(),
        default=10,
        metavar="N",
        help="at most N facts and N messages (default 10)",
    )
    search.add_argument(
        "--mode",
        choices=list(MODES),
        default="dual",
        help="how facts are found (docs/search.md): dual, the two below fused (default); "
        "expansion, the graph walk from the entities the query names; semantic, the facts "
        "nearest the query's meaning; episodes, none: messages only",
    )
    search.add_argument("--since", type=when, help=SINCE)
    search.add_argument("--until", type=when, help=UNTIL)
    search.add_argument(
        "--as-of",
        type=when,
        metavar="WHEN",
        help="what the memory held then: the messages said by then and the facts true then, "
        f"ended since or not ({TIME_FORMS})",
    )
    search.add_argument(
        "--near",
        action="append",
        type=text_arg("a name in --near"),
        metavar="NAME",
        help="whom or what the conversation is about: that entity anchors the search as if "
        "the query named it ('what does she like?' --near Kate; repeatable)",
    )
    search.add_argument(
        "--filter",
        action="append",
        type=metadata_filter,
        metavar="KEY=VALUE",
        help="only what messages with this metadata said (repeatable, all must hold)",
    )
    search.add_argument(
        "--max-tokens",
        type=count(None),
        metavar="N",
        help="print the block an agent puts in its prompt, at most N tokens (search(q, "
        "max_tokens=N).context()), instead of the ranked lists",
    )
    search.add_argument(
        "--explain",
        action="store_true",
        help="under each hit, its rank and score in each leg and the relations the graph walk "
        "reached it by (search(q, explain=True); --json: each hit's explanation)",
    )
    search.set_defaults(func=cmd_search)

    entities = sub.add_parser("entities", help="a user's most salient entities")
    entities.add_argument("--user", required=True, type=user_arg, help=WHOSE)
    entities.add_argument("--limit", type=count(), default=10, help="entities shown (default 10)")
    entities.add_argument(
        "--by",
        choices=["salience", "frequency", "recency"],
        default="salience",
        help="the order: salience (mentions and recency together; the default), "
        "frequency (mentions) or recency (last seen)",
    )
    entities.set_defaults(func=cmd_entities)

    stats = sub.add_parser("stats", help="counts of users, entities, facts and episodes")
    stats.add_argument("--user", type=held_user_arg, help="only this user")
    stats.set_defaults(func=cmd_stats)
    users = sub.add_parser("users", help="list the users of this store with their counts")
    users.set_defaults(func=cmd_users)

    entity = sub.add_parser("entity", help="one entity with its facts and messages")
    entity.add_argument(
        "name",
        metavar="NAME",
        type=text_arg("the name"),
        help="the entity's name, one of its aliases or its id",
    )
    entity.add_argument("--user", required=True, type=user_arg, help=WHOSE)
    entity.add_argument(
        "--limit", type=count(), default=20, help="facts and messages shown (default 20)"
    )
    entity.add_argument("--since", type=when, help=SINCE)
    entity.add_argument("--until", type=when, help=UNTIL)
    entity.set_defaults(func=cmd_entity)

    history = sub.add_parser("history", help="the change events of a fact or entity")
    history.add_argument(
        "uid",
        metavar="UID",
        type=text_arg("the id"),
        help="the id of a fact (search shows it) or of an entity (entity)",
    )
    history.add_argument("--user", required=True, type=user_arg, help=WHOSE)
    history.set_defaults(func=cmd_history)
