"""The `graphmem` commands that move a user's graph in and out of a store (`export`,
`import`) or show it in Neo4j Browser (`browse`). Each calls one engine function;
`engine.cli` registers them (`register`)."""

from __future__ import annotations

import argparse
import os
import re
import shlex
import sys
from pathlib import Path
from typing import Any

from engine.cli.arg_types import held_user_arg, text_arg, user_arg
from engine.cli.shown import Shown
from engine.cli.verbs import emit, open_memory, require_data_dir, require_user
from engine.errors import InvalidInputError
from engine.private_files import write_private


def cmd_export(args: argparse.Namespace) -> None:
    with open_memory(args, embedding_preload=False) as mem:
        require_user(mem, args.user)  # a misspelt user is no empty backup
        text = mem.export(args.user, args.format, dialect=args.dialect, embeddings=args.embeddings)
    if args.output in (None, "-"):
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    try:
        write_private(Path(args.output), text)  # a user's whole memory: theirs to share
    except OSError as exc:
        raise InvalidInputError(f"cannot write {args.output!r}: {exc}") from exc
    if args.json:
        emit(args, {"user_id": args.user, "format": args.format, "output": args.output}, "")
        return
    print(f"exported user {args.user!r} as {args.format} to {args.output}", file=sys.stderr)


def cmd_import(args: argparse.Namespace) -> None:
    from engine.load.load_bar import Phased, for_stream
    from engine.transfer.document import read_bounded
    from engine.transfer.import_limits import ImportLimits

    show: Shown[Phased] = Shown(
        None if args.json else for_stream(verb="import")
    )  # on stderr, as load's
    with open_memory(args, create=True) as mem:
        if show.show is not None:
            _say_reading(args.file)
        if args.file == "-":
            limits = ImportLimits.from_settings(mem.settings)
            source: bytes | Path = read_bounded(sys.stdin.buffer, limits, "standard input")
        else:
            source = Path(args.file)
        try:
            report = mem.import_(source, user_id=args.user, progress=show)
        finally:
            show.close()
    counts = ", ".join(
        f"{new} new {kind} ({held} already held)"
        for kind, new, held in (
            ("entities", report.entities_new, report.entities_held),
            ("facts", report.facts_new, report.facts_held),
            ("episodes", report.episodes_new, report.episodes_held),
            ("history events", report.history_new, report.history_held),
        )
    )
    text = f"imported {counts} of {report.source_user_id!r} into user {report.user_id!r}"
    if report.made_own:  # its own entity took in the one named as its id (mentions added up)
        text += f"; the entity named as {report.user_id!r} is that user's own entity"
    emit(args, report.model_dump(), text)


def _say_reading(file: str) -> None:
    """One line on stderr before an import reads its export: a large one is read and parsed
    for a while before the first progress line."""
    if file == "-":
        what = "standard input"
    else:
        try:
            what = f"{file} ({_size(os.path.getsize(file))})"
        except OSError:
            return  # the import itself says what is wrong with the file
    print(f"import: reading {what}", file=sys.stderr, flush=True)


def _size(n: int) -> str:
    """`812 bytes`, `12.3 kB`, `4.0 MB`, `1.2 GB` (powers of 1000)."""
    if n < 1000:
        return f"{n} bytes"
    scaled, units = n / 1000, ["kB", "MB", "GB"]
    while scaled >= 1000 and len(units) > 1:
        scaled, units = scaled / 1000, units[1:]
    return f"{scaled:.1f} {units[0]}"


def cmd_browse(args: argparse.Namespace) -> None:
    from engine.config import build_settings
    from engine.transfer.browse import browse_hint

    settings = build_settings(**({"data_dir": args.data_dir} if args.data_dir else {}))
    require_data_dir(settings)  # the graph it would tell how to copy is not there
    hint = browse_hint(settings.neo4j_uri, args.user, args.entity)
    text = (
        f"Open this to get the query in Neo4j Browser's editor, then run it:\n{hint.open_url}\n\n"
        f"Or paste this into the editor at {hint.url} (cypher/browser/{hint.query}):\n\n"
        f"{hint.statement}"
    )
    if settings.store != "neo4j":
        text = _embedded_first(args.user) + text
    emit(args, hint.model_dump(), text)


def _embedded_first(user_id: str) -> str:
    """What `browse` says first on the embedded store, which Neo4j Browser cannot open."""
    file = re.sub(r"[^\w.-]", "_", user_id)
    return (
        "This store is the embedded FalkorDB, which Neo4j Browser cannot open. Copy the graph "
        "into a Neo4j first (docker/README.md starts one):\n"
        f"  graphmem export --user {shlex.quote(user_id)} --format cypher -o {file}.cypher\n"
        "and run that script in Browser or cypher-shell. Then:\n\n"
    )


def register(sub: Any) -> None:
    """Add this module's commands to the `graphmem` subparsers `sub`."""
    export = sub.add_parser(
        "export",
        help="write one user's graph as json (lossless), cypher or graphml",
        description="Write one user's graph. json is lossless and is what `graphmem import` "
        "reads; cypher is a script for Neo4j Browser or cypher-shell; graphml is for graph tools.",
        epilog="Exit status: 0 written; 1 the user has no memories (nothing is written: "
        "graphmem users lists them) or the store failed; 2 the command line was wrong.",
    )
    export.add_argument(
        "--user", required=True, type=held_user_arg, help="the user whose graph to write"
    )
    export.add_argument(
        "--format",
        choices=["json", "cypher", "graphml"],
        default="json",
        help="json (lossless: what import reads; the default), a cypher script or graphml",
    )
    export.add_argument(
        "-o",
        "--output",
        type=text_arg("the output file"),
        help="file to write (default: standard output)",
    )
    export.add_argument(
        "--dialect",
        choices=["neo4j", "falkordb"],
        default="neo4j",
        help="the database the cypher script is for (default neo4j)",
    )
    export.add_argument(
        "--embeddings",
        action="store_true",
        help="put the vectors in the cypher script too (json always has them)",
    )
    export.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS,
        help="with -o: what was written, as JSON on standard output (the export itself is "
        "in --format; without -o it is the output)",
    )
    export.set_defaults(func=cmd_export)

    imp = sub.add_parser(
        "import",
        help="read a json export into this store (idempotent)",
        description="Read a json export (`graphmem export --format json`) into the configured "
        "store (GRAPHMEM_STORE=neo4j for Neo4j). Running it again changes nothing, and it "
        "never lowers what the user already holds.",
        epilog="Exit status: 0 imported; 1 refused (nothing written) or the store failed; 2 "
        "the command line was wrong.",
    )
    imp.add_argument(
        "file",
        metavar="FILE",
        type=text_arg("the file"),
        help="the json export, or - for standard input",
    )
    imp.add_argument(
        "--user",
        required=True,
        type=user_arg,
        help="whose graph to write: the file does not choose (its own user restores it, "
        "another gets a copy)",
    )
    imp.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS,
        help="print the report as JSON (no progress lines)",
    )
    imp.set_defaults(func=cmd_import)

    browse = sub.add_parser(
        "browse",
        help="the Neo4j Browser URL and a ready query to paste",
        description="The Neo4j Browser URL and a ready query showing one user's graph (or one "
        "entity's neighbourhood) in a Neo4j store. On the embedded store it says first how to "
        "copy the graph into a Neo4j (graphmem export --format cypher).",
    )
    browse.add_argument("--user", required=True, type=user_arg, help="the user whose graph to show")
    browse.add_argument(
        "--entity", type=text_arg("the entity"), help="show this entity's depth-2 neighbourhood"
    )
    browse.set_defaults(func=cmd_browse)
