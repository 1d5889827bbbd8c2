"""The `graphmem` command line. Each command calls one engine function."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from engine.cli_ingest import ingest_parser
from engine.errors import GraphmemError, InvalidInputError
from engine.memory import Memory
from engine.private_files import write_private


def _memory(args: argparse.Namespace, **overrides: Any) -> Memory:
    if args.data_dir:
        overrides["data_dir"] = args.data_dir
    return Memory(**overrides)


def _print(args: argparse.Namespace, payload: Any, text: str) -> None:
    print(json.dumps(payload, indent=2, default=str) if args.json else text)


def cmd_demo(args: argparse.Namespace) -> None:
    from engine.demo import DEMO_FACTS, DEMO_QUERIES, DEMO_USER

    with _memory(args) as mem:
        mem.delete_all(DEMO_USER)
        added = mem.add_facts(DEMO_FACTS, user_id=DEMO_USER)
        print(
            f"stored {added.facts_added} facts about {added.entities_added} entities "
            f"for user {DEMO_USER!r}\n"
        )
        for query in DEMO_QUERIES:
            result = mem.search(query, user_id=DEMO_USER, limit=args.limit)
            print(
                f"? {query}   ({result.timings_ms['total']:.0f} ms, anchors: "
                f"{', '.join(result.anchors) or '-'})"
            )
            for hit in result.facts:
                legs = "+".join(hit.legs)
                print(f"  {hit.score:.4f}  {hit.fact.text}  [{legs}]")
            print()
        top = ", ".join(
            f"{s.entity.name} ({s.entity.mentions})" for s in mem.top_entities(DEMO_USER, 5)
        )
        print(f"most salient entities: {top}")


def cmd_search(args: argparse.Namespace) -> None:
    with _memory(args) as mem:
        result = mem.search(args.query, user_id=args.user, limit=args.limit, mode=args.mode)
    lines = [
        f"{h.score:.4f}  {h.fact.text}  [{'+'.join(h.legs)}] {h.fact.uid}" for h in result.facts
    ]
    _print(args, result.model_dump(mode="json"), "\n".join(lines) or "(no facts)")


def cmd_entities(args: argparse.Namespace) -> None:
    with _memory(args) as mem:
        top = mem.top_entities(args.user, args.limit, by=args.by)
    lines = [f"{s.score:10.3f}  {s.entity.name}  ({s.entity.mentions} mentions)" for s in top]
    _print(args, [s.model_dump(mode="json") for s in top], "\n".join(lines) or "(no entities)")


def cmd_stats(args: argparse.Namespace) -> None:
    with _memory(args) as mem:
        stats = mem.stats(args.user)
    text = "\n".join(f"{k}: {v}" for k, v in stats.model_dump().items())
    _print(args, stats.model_dump(), text)


def cmd_load(args: argparse.Namespace) -> None:
    from engine.load.progress import for_stream

    show = None if args.json else for_stream()
    with _memory(args) as mem:
        try:
            report = mem.load(
                args.file,
                args.user,
                format=args.format,
                delimiter=args.delimiter,
                restart=args.restart,
                chunk_size=args.chunk_size,
                progress=show,
            )
        finally:
            if show is not None:
                show.close()
    _print(args, report.model_dump(), _load_text(report))


def _load_text(report: Any) -> str:
    if report.already_loaded:
        return (
            f"{report.path} is already loaded for user {report.user_id!r} "
            "(--restart reads it again)"
        )
    lines = [
        f"loaded {report.facts_added} facts ({report.entities_added} new entities) for user "
        f"{report.user_id!r} in {report.seconds:.1f} s ({report.facts_per_s:.0f} facts/s)"
        + ("; resumed" if report.resumed else ""),
        f"{report.facts_already_stored} facts were already stored; "
        f"{report.error_count} lines had errors",
    ]
    lines += report.errors[:20]
    if report.error_count > 20:
        lines.append(f"... and {report.error_count - 20} more (--json lists the first 100)")
    return "\n".join(lines)


def cmd_export(args: argparse.Namespace) -> None:
    with _memory(args) as mem:
        text = mem.export(args.user, args.format, dialect=args.dialect, embeddings=args.embeddings)
    if args.output in (None, "-"):
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    try:
        write_private(Path(args.output), text)  # a user's whole memory: theirs to share
    except OSError as exc:
        raise InvalidInputError(f"cannot write {args.output!r}: {exc}") from exc
    print(f"exported user {args.user!r} as {args.format} to {args.output}", file=sys.stderr)


def cmd_import(args: argparse.Namespace) -> None:
    from engine.transfer.import_limits import ImportLimits
    from engine.transfer.restore import parse_snapshot

    source: bytes | Path = sys.stdin.buffer.read() if args.file == "-" else Path(args.file)
    with _memory(args) as mem:
        snapshot = parse_snapshot(source, ImportLimits.from_settings(mem.settings))
        if args.user is None:  # the file does not choose whose graph it writes
            raise InvalidInputError(
                f"{args.file} holds the graph of user {snapshot.user_id!r}; say whose graph to "
                f"write with --user (--user {snapshot.user_id!r} for that same user)"
            )
        report = mem.import_(snapshot, user_id=args.user)
    text = (
        f"imported {report.entities} entities, {report.facts} facts, {report.episodes} "
        f"episodes, {report.history} history events of {report.source_user_id!r} "
        f"into user {report.user_id!r}"
    )
    _print(args, report.model_dump(), text)


def cmd_browse(args: argparse.Namespace) -> None:
    from engine.config import build_settings
    from engine.transfer.browse import browse_hint

    uri = build_settings().neo4j_uri
    hint = browse_hint(uri, args.user, args.entity)
    text = (
        f"Open this to get the query in Neo4j Browser's editor, then run it:\n{hint.open_url}\n\n"
        f"Or paste this into the editor at {hint.url} (cypher/browser/{hint.query}):\n\n"
        f"{hint.statement}"
    )
    _print(args, hint.model_dump(), text)


def cmd_mcp(args: argparse.Namespace) -> None:
    from engine.config import build_settings
    from engine.mcp_server.server import serve

    default_user = args.user or build_settings().mcp_user_id
    if args.port is not None and not 1 <= args.port <= 65535:
        raise InvalidInputError(f"--port must be between 1 and 65535, got {args.port}")
    serve(lambda: _memory(args), default_user, http_port=args.port if args.http else None)


def _mcp_parser(sub: Any) -> None:
    mcp = sub.add_parser(
        "mcp",
        help="serve memory to MCP hosts (stdio, or streamable HTTP on 127.0.0.1)",
        description="Run graphmem as an MCP server. Over stdio by default (what MCP hosts "
        "spawn); --http serves streamable HTTP on 127.0.0.1 only, at /mcp.",
    )
    mcp.add_argument("--user", help="the user tools act for when a call names none")
    mcp.add_argument("--http", action="store_true", help="streamable HTTP instead of stdio")
    mcp.add_argument("--port", type=int, default=8765, help="HTTP port (default 8765)")
    mcp.set_defaults(func=cmd_mcp)


def _exchange_parsers(sub: Any) -> None:
    export = sub.add_parser(
        "export",
        help="write one user's graph as json (lossless), cypher or graphml",
        description="Write one user's graph. json is lossless and is what `graphmem import` "
        "reads; cypher is a script for Neo4j Browser or cypher-shell; graphml is for graph tools.",
    )
    export.add_argument("--user", required=True)
    export.add_argument("--format", choices=["json", "cypher", "graphml"], default="json")
    export.add_argument("-o", "--output", help="file to write (default: standard output)")
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
    export.set_defaults(func=cmd_export)

    imp = sub.add_parser(
        "import",
        help="read a json export into this store (idempotent)",
        description="Read a json export (`graphmem export --format json`) into the configured "
        "store (GRAPHMEM_STORE=neo4j for Neo4j). Running it again changes nothing.",
    )
    imp.add_argument("file", metavar="FILE", help="the json export, or - for standard input")
    imp.add_argument(
        "--user",
        help="whose graph to write (required: the file does not choose; another user than "
        "the file's gets a copy)",
    )
    imp.set_defaults(func=cmd_import)

    browse = sub.add_parser("browse", help="the Neo4j Browser URL and a ready query to paste")
    browse.add_argument("--user", required=True)
    browse.add_argument("--entity", help="show this entity's depth-2 neighbourhood")
    browse.set_defaults(func=cmd_browse)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="graphmem",
        description="Graph-first long-term memory for LLM agents. The embedded store lives in "
        "~/.graphmem unless --data-dir or GRAPHMEM_HOME says otherwise.",
    )
    parser.add_argument("--data-dir", help="where the embedded database keeps its files")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = sub.add_parser("demo", help="store a small example graph and search it")
    demo.add_argument("--limit", type=int, default=3, help="facts shown per query (default 3)")
    demo.set_defaults(func=cmd_demo)

    search = sub.add_parser("search", help="search one user's memory")
    search.add_argument("query")
    search.add_argument("--user", required=True)
    search.add_argument("--limit", type=int, default=10)
    search.add_argument("--mode", choices=["dual", "expansion", "semantic"], default="dual")
    search.set_defaults(func=cmd_search)

    entities = sub.add_parser("entities", help="a user's most salient entities")
    entities.add_argument("--user", required=True)
    entities.add_argument("--limit", type=int, default=10)
    entities.add_argument("--by", choices=["salience", "frequency", "recency"], default="salience")
    entities.set_defaults(func=cmd_entities)

    stats = sub.add_parser("stats", help="counts of users, entities, facts and episodes")
    stats.add_argument("--user", help="only this user")
    stats.set_defaults(func=cmd_stats)
    _exchange_parsers(sub)
    ingest_parser(sub)
    _mcp_parser(sub)
    _load_parser(sub)
    return parser


def _load_parser(sub: Any) -> None:
    load = sub.add_parser(
        "load",
        help="bulk-load a file of triples (resumable; loading it again adds nothing)",
        description="Load triples, one `subject, predicate, object[, text]` a line, as TSV, "
        "CSV or JSONL (objects with those keys). Bad lines are reported by number and the "
        "rest loads. An interrupted load resumes when run again.",
    )
    load.add_argument("file", metavar="FILE")
    load.add_argument("--user", required=True, help="the user whose graph receives the facts")
    load.add_argument("--format", choices=["auto", "tsv", "csv", "jsonl"], default="auto")
    load.add_argument("--delimiter", help="column separator of tsv/csv (default tab / comma)")
    load.add_argument("--restart", action="store_true", help="ignore the resume checkpoint")
    load.add_argument("--chunk-size", type=int, default=2000, help="facts per write (default 2000)")
    load.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS,
        help="print the report as JSON (no progress bar)",
    )
    load.set_defaults(func=cmd_load)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    func: Callable[[argparse.Namespace], int | None] = args.func
    try:
        code = func(args)
    except GraphmemError as exc:
        print(f"graphmem: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("graphmem: interrupted", file=sys.stderr)
        return 130
    return code or 0


if __name__ == "__main__":
    sys.exit(main())
