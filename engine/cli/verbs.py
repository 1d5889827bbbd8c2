"""The `graphmem` commands that change one user's memory by hand (`add`, `update`, `delete`,
`merge`), each over one `Memory` method, and what every command shares: the common options,
the output, the errors behind the exit status. `engine.cli` registers them (`register`)."""

from __future__ import annotations

import argparse
import contextlib
import json
import shlex
from typing import Any

from engine.cli.arg_types import TIME_FORMS, held_user_arg, text_arg, user_arg, when
from engine.config import Settings, build_settings
from engine.errors import InvalidInputError, NotFoundError
from engine.memory import Memory
from engine.models import AddResult, Deleted, Fact
from engine.normalize import entity_key
from engine.private_files import holds_store
from engine.prompt_block import said_day
from engine.times import as_of_window

COMMON_HELP = {
    "--data-dir": "where the embedded database keeps its files (default ~/.graphmem, or "
    "GRAPHMEM_HOME or GRAPHMEM_DATA_DIR when set)",
    "--json": "machine-readable output",
    "global --json": "machine-readable output (every command but mcp)",
}


def open_memory(args: argparse.Namespace, *, create: bool = False, **overrides: Any) -> Memory:
    """The `Memory` of the command's data dir (`embedding_preload=False` for a command that
    embeds nothing: its process need not wait for a model it never uses). Only a command
    that stores what it is given (`create=True`) makes a data dir, of a folder that does not
    exist or of one that holds no store.

    Raises:
        NotFoundError: the embedded store's data dir does not exist or holds no store, and
            `create` is False (nothing is made, no server started: a misspelt --data-dir, or
            a folder of other files, holds no memories).
    """
    if getattr(args, "data_dir", None):
        overrides["data_dir"] = args.data_dir
    settings = build_settings(**overrides)
    if not create:
        require_data_dir(settings)
    return Memory(settings)


def require_data_dir(settings: Settings) -> None:
    """Raises NotFoundError when the embedded store's data dir does not exist or is a folder
    that holds no store (Neo4j keeps no memory there): opening it would make a folder of
    other files a data dir (0700, a server's files in it). A file is left for opening to
    refuse ("it is not a directory")."""
    if settings.store != "falkordb":
        return
    data_dir = settings.data_dir
    if not data_dir.exists():
        raise NotFoundError(
            f"no data dir at {data_dir} (nothing is stored there: add, ingest, load, "
            "import, demo and mcp create it)"
        )
    if data_dir.is_dir() and not holds_store(data_dir):
        raise NotFoundError(
            f"no graphmem data in {data_dir}: it is not a data dir (add, ingest, load, import, "
            "demo and mcp create one; give them a new folder, not one holding other files)"
        )


def emit(args: argparse.Namespace, payload: Any, text: str) -> None:
    print(json.dumps(payload, indent=2, default=str) if args.json else text)


def require_user(mem: Memory, user_id: str) -> None:
    """A read of a user the store has nothing of is an error, not an empty answer.

    Raises:
        NotFoundError: the user has no entity, fact or message.
    """
    stats = mem.stats(user_id)
    if not (stats.entities or stats.facts or stats.episodes):
        raise NotFoundError(f"no memories for user {user_id!r} (graphmem users lists them)")


def plural(n: int, word: str, many: str | None = None) -> str:
    """`1 mention`, `2 mentions` (`many`: the plural when it is not `word` + s)."""
    return f"{n} {word}" if n == 1 else f"{n} {many or word + 's'}"


def fact_line(fact: Fact) -> str:
    """`[2024-05-01] Alice lives in Paris` (since when it is true, as precisely as known:
    `[2024]` for "last year"), with its end if it has one; a fact with no known start (said in
    an undated message) shows `[undated]`, not when it was stored (the column stays;
    `context()`, a prompt's block, leaves the mark out)."""
    until = f" (until {fact.invalid_at:%Y-%m-%d})" if fact.invalid_at else ""
    return f"[{said_day(fact.valid_at, fact.valid_unit)}] {fact.text}{until}"


class UsageError(Exception):
    """The command line asks for something impossible (exit status 2, as argparse's)."""


def _check_add_options(args: argparse.Namespace) -> None:
    """An option the chosen form of `add` would not use is refused, never dropped: `--ts`
    given with `--fact` left the fact undated."""
    if args.fact:
        unused = [name for name in ("ts", "speaker", "session") if getattr(args, name) is not None]
        why = "is for a message (TEXT), not --fact: --valid-at says since when a fact is true"
    else:
        unused = ["valid_at"] if args.valid_at is not None else []
        why = "is for --fact; a message's facts are true from its --ts"
    if unused:
        given = ", ".join("--" + name.replace("_", "-") for name in unused)
        raise UsageError(f"add: {given} {why}")


class PartialFailure(Exception):
    """The command did part of its work; the output says what (exit status 1)."""


# -- commands ------------------------------------------------------------------------------


def cmd_add(args: argparse.Namespace) -> None:
    if (args.text is None) == (not args.fact):
        raise UsageError("add: give either TEXT or --fact SUBJECT PREDICATE OBJECT")
    _check_add_options(args)
    with open_memory(args, create=True) as mem:
        if args.fact:
            facts = [
                {"subject": s, "predicate": p, "object": o, "valid_at": args.valid_at}
                for s, p, o in args.fact
            ]
            result = mem.add_facts(facts, user_id=args.user)
        else:
            result = mem.add(
                args.text,
                user_id=args.user,
                session_id=args.session,
                speaker=args.speaker,
                ts=args.ts,
            )
    emit(args, result.model_dump(mode="json"), _add_text(result))
    if result.extraction_error:  # the message waits in the dead letters: say how to replay it
        given = f" --data-dir {shlex.quote(args.data_dir)}" if args.data_dir else ""
        raise PartialFailure(
            "the message is stored but no fact was extracted from it (see above); graphmem "
            f"ingest --retry-failed --user {shlex.quote(args.user)}{given} extracts it again"
        )
    if result.errors:
        raise PartialFailure(f"{plural(len(result.errors), 'problem')}: see above")


def _add_text(result: AddResult) -> str:
    lines = [
        f"user {result.user_id!r}: {plural(result.facts_added, 'fact')} added, "
        f"{result.facts_updated} updated, {result.facts_invalidated} invalidated, "
        f"{plural(result.entities_added, 'new entity', 'new entities')}"
        + (f"; {plural(len(result.episode_uids), 'message')} stored" if result.episode_uids else "")
        + (f"; {result.episodes_skipped} already stored" if result.episodes_skipped else "")
    ]
    lines += [f"  fact {uid}" for uid in result.fact_uids]
    lines += [f"  message {uid}" for uid in result.episode_uids]
    lines += [f"  error: {e}" for e in result.errors]
    return "\n".join(lines)


def cmd_update(args: argparse.Namespace) -> None:
    if args.text is None and args.valid_at is None and args.invalid_at is None:
        raise UsageError("update: give --text, --valid-at or --invalid-at")
    with open_memory(args) as mem:
        fact = mem.update(
            args.uid,
            args.user,
            text=args.text,
            valid_at=args.valid_at,
            invalid_at=args.invalid_at,
        )
    emit(args, fact.model_dump(mode="json"), f"updated {fact.uid}: {fact_line(fact)}")


def cmd_delete(args: argparse.Namespace) -> None:
    if args.forget and args.kind != "fact":
        raise UsageError(f"delete: --forget is for a fact, not a {args.kind}")
    with open_memory(args, embedding_preload=False) as mem:
        if args.kind == "fact" and args.forget:
            deleted = mem.forget(args.id, args.user)
        elif args.kind == "fact":
            mem.delete(args.id, args.user)
            deleted = None
        elif args.kind == "message":
            deleted = mem.delete_episode(args.id, args.user)
        else:
            deleted = mem.delete_entity(args.id, args.user)
    if deleted is None:
        text = f"deleted fact {args.id} (the messages it came from stay: --forget deletes them too)"
        emit(args, Deleted(facts=[args.id]).model_dump(), text)
        return
    text = (
        f"deleted {plural(len(deleted.facts), 'fact')}, "
        f"{plural(len(deleted.episodes), 'message')}, "
        f"{plural(len(deleted.entities), 'entity', 'entities')}"
    )
    emit(args, deleted.model_dump(), text)


def cmd_merge(args: argparse.Namespace) -> None:
    if entity_key(args.keep) == entity_key(args.merge):
        raise UsageError(f"merge: KEEP and MERGE name one entity ({args.keep!r})")
    with open_memory(args) as mem:
        kept = mem.merge_entities(args.keep, args.merge, args.user)
    text = f"merged {args.merge!r} into {kept.name!r} ({kept.uid}); aliases: {kept.aliases}"
    emit(args, kept.model_dump(mode="json"), text)


# -- parsers -------------------------------------------------------------------------------

WHOSE = "the user whose memory to change"
_SERVERS = frozenset({"mcp"})  # commands that serve, printing no result


def register_add(sub: Any) -> None:
    """Add the `add` command to the `graphmem` subparsers `sub`."""
    add = sub.add_parser(
        "add",
        help="remember one message (extracted) or pre-extracted facts",
        description="Remember TEXT as one message of the user (facts are extracted from it), "
        "or store facts given as --fact SUBJECT PREDICATE OBJECT (repeatable).",
    )
    add.add_argument(
        "text", nargs="?", metavar="TEXT", type=text_arg("the message"), help="the message"
    )
    add.add_argument("--user", required=True, type=user_arg, help=WHOSE)
    add.add_argument(
        "--fact",
        nargs=3,
        action="append",
        type=text_arg("a fact's subject, predicate or object"),
        metavar=("SUBJECT", "PREDICATE", "OBJECT"),
        help="a fact to store as given, no extraction (repeatable; instead of TEXT): "
        "--fact Alice LIVES_IN Paris",
    )
    add.add_argument(
        "--speaker",
        type=text_arg("the speaker"),
        help="who wrote the message (whom its 'I' means)",
    )
    add.add_argument(
        "--session", type=text_arg("the session"), help="the conversation it belongs to"
    )
    add.add_argument("--ts", type=when, help=f"when the message was written ({TIME_FORMS})")
    add.add_argument(
        "--valid-at",
        type=when,
        help=f"with --fact: since when the facts are true ({TIME_FORMS}); default: undated",
    )
    add.set_defaults(func=cmd_add)


def register(sub: Any) -> None:
    """Add the commands that change what is stored to the `graphmem` subparsers `sub`."""
    update = sub.add_parser("update", help="change a fact's text or when it was true")
    update.add_argument(
        "uid",
        metavar="FACT_UID",
        type=text_arg("the fact id"),
        help="the fact's id (search shows it)",
    )
    update.add_argument("--user", required=True, type=user_arg, help=WHOSE)
    update.add_argument("--text", type=text_arg("the new sentence"), help="the new sentence")
    update.add_argument("--valid-at", type=when, help=f"since when it is true ({TIME_FORMS})")
    update.add_argument(
        "--invalid-at", type=when, help=f"when it stopped being true ({TIME_FORMS})"
    )
    update.set_defaults(func=cmd_update)

    delete = sub.add_parser(
        "delete",
        help="delete a fact, a message or an entity",
        description="Delete one fact (--forget: and the messages it came from, so search no "
        "longer shows what was said), one message (its facts stay), or one entity with "
        "every fact that names it.",
    )
    delete.add_argument("kind", choices=["fact", "message", "entity"], help="what ID names")
    delete.add_argument(
        "id", metavar="ID", type=text_arg("the id"), help="a uid (an entity: its name also works)"
    )
    delete.add_argument("--user", required=True, type=held_user_arg, help=WHOSE)
    delete.add_argument("--forget", action="store_true", help="fact: also its messages")
    delete.set_defaults(func=cmd_delete)

    merge = sub.add_parser("merge", help="merge one entity into another (KEEP absorbs MERGE)")
    merge.add_argument(
        "keep",
        metavar="KEEP",
        type=text_arg("the entity to keep"),
        help="the entity that stays: a name, alias or id",
    )
    merge.add_argument(
        "merge",
        metavar="MERGE",
        type=text_arg("the entity to merge"),
        help="the entity merged into KEEP and deleted: its facts and messages move to KEEP, "
        "its names become KEEP's aliases",
    )
    merge.add_argument("--user", required=True, type=user_arg, help=WHOSE)
    merge.set_defaults(func=cmd_merge)


def add_common_options(sub: Any) -> None:
    """--data-dir and --json after the command too (`graphmem search ... --json`), for every
    command that does not define them itself; a server (`mcp`) prints no result to put in
    JSON, so it takes no --json. A command with no description of its own opens its
    `--help` with the line `graphmem --help` lists it by."""
    for listed in sub._choices_actions:  # argparse keeps each command's `help` only here
        parser = sub.choices[listed.dest]
        if parser.description is None and listed.help:
            parser.description = f"{listed.help[0].upper()}{listed.help[1:]}."
    for name, parser in sub.choices.items():
        for flag, extra in (("--data-dir", DATA_DIR), ("--json", {"action": "store_true"})):
            if flag == "--json" and name in _SERVERS:
                continue
            with contextlib.suppress(argparse.ArgumentError):  # the command has its own
                parser.add_argument(
                    flag, default=argparse.SUPPRESS, help=COMMON_HELP[flag], **extra
                )


def check_window(args: argparse.Namespace) -> None:
    """`--since` later than `--until` (or `--as-of`) is a usage error (status 2) before any
    store is opened: the window holds nothing, most often because the two were given the
    wrong way round."""
    try:
        as_of_window(args.since, args.until, getattr(args, "as_of", None))
    except InvalidInputError as exc:
        raise UsageError(str(exc)) from None


DATA_DIR: dict[str, Any] = {"type": text_arg("the data dir")}  # before or after the command
