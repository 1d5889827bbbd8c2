"""The `graphmem` command line. Each command calls one engine function."""

from __future__ import annotations

import argparse
import json
import logging
import os
import shlex
import shutil
import sys
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from engine.cli.arg_types import count, text_arg, user_arg
from engine.cli.exchange import register as register_exchange
from engine.cli.ingest_command import ingest_parser
from engine.cli.read import register as register_reads
from engine.cli.shown import Shown
from engine.cli.verbs import (
    COMMON_HELP,
    DATA_DIR,
    PartialFailure,
    UsageError,
    add_common_options,
    open_memory,
    plural,
    register_add,
)
from engine.cli.verbs import register as register_edits
from engine.config import Settings
from engine.errors import GraphmemError
from engine.mcp_server.command import add_mcp_parser

EXIT_STATUS = """exit status:
  0    done
  1    an operation failed, or did part of its work (the message says what), or the
       user has no memories or the data dir does not exist or holds no graphmem data
       (commands that read or edit what is stored; add, ingest, load, import, demo and
       mcp create the data dir)
  2    the command line is wrong (unknown command or option, missing argument)
  130  interrupted (Ctrl-C)
Output cut short by a closed pipe (graphmem search ... | head) is not an error."""


def _print(args: argparse.Namespace, payload: Any, text: str) -> None:
    print(json.dumps(payload, indent=2, default=str) if args.json else text)


def cmd_demo(args: argparse.Namespace) -> None:
    from engine.demo import DEMO_FACTS, DEMO_QUERIES, DEMO_USER

    with open_memory(args, create=True) as mem:
        mem.delete_all(DEMO_USER)
        added = mem.add_facts(DEMO_FACTS, user_id=DEMO_USER)
        results = [mem.search(query, user_id=DEMO_USER, limit=args.limit) for query in DEMO_QUERIES]
        top = mem.top_entities(DEMO_USER, 5)
        where = _store_of(mem.settings)
    payload = {
        "user_id": DEMO_USER,
        "store": where,
        "added": added.model_dump(mode="json"),
        "searches": [r.model_dump(mode="json") for r in results],
        "top_entities": [s.model_dump(mode="json") for s in top],
    }
    lines = [
        f"stored {added.facts_added} facts about {added.entities_added} entities "
        f"for user {DEMO_USER!r} in {where}\n"
    ]
    for query, result in zip(DEMO_QUERIES, results, strict=True):
        anchors = ", ".join(result.anchors) or "-"
        lines.append(f"? {query}   ({result.timings_ms['total']:.0f} ms, anchors: {anchors})")
        lines += [f"  {h.score:.4f}  {h.fact.text}  [{'+'.join(h.legs)}]" for h in result.facts]
        lines.append("")
    names = ", ".join(f"{s.entity.name} ({s.entity.mentions})" for s in top)
    lines.append(f"most salient entities: {names}")
    given = f" --data-dir {shlex.quote(args.data_dir)}" if args.data_dir else ""
    lines.append(
        f"\nsearch it yourself: {_program()}{given} search 'who is Spider-Man?' --user {DEMO_USER}"
    )
    _print(args, payload, "\n".join(lines))


def _program() -> str:
    """How to run graphmem again: `graphmem` when that name finds this program, else the path
    it was started by (`make demo` runs .venv/bin/graphmem, on no PATH until the venv is
    activated)."""
    started = sys.argv[0]
    if Path(started).name != "graphmem":  # python -m engine.cli, a test runner
        return "graphmem"
    found = shutil.which("graphmem")
    if found and Path(found).resolve() == Path(started).resolve():
        return "graphmem"
    return shlex.quote(started)


def _store_of(settings: Settings) -> str:
    """Where a command's memory is: the embedded store's data dir, or the Neo4j server."""
    if settings.store == "neo4j":
        return f"Neo4j at {settings.neo4j_uri}"
    return f"the data dir {settings.data_dir}"


def cmd_stop(args: argparse.Namespace) -> None:
    from engine.components import stop_server
    from engine.config import build_settings

    settings = build_settings(**({"data_dir": args.data_dir} if args.data_dir else {}))
    stopped, clients = stop_server(settings)
    users = sorted(set(clients))  # one name per process, however many connections it holds
    if users:
        raise GraphmemError(
            f"the server of {settings.data_dir} is in use by {', '.join(users)} "
            "(graphmem-<pid> names a process); close those first"
        )
    done = "stopped the server of" if stopped else "no server was running for"
    if args.json:
        _print(args, {"data_dir": str(settings.data_dir), "stopped": stopped}, "")
    else:
        print(f"graphmem: {done} {settings.data_dir}", file=sys.stderr)


def cmd_load(args: argparse.Namespace) -> int:
    from engine.load.load_bar import Phased, for_stream

    show: Shown[Phased] = Shown(None if args.json else for_stream())
    with open_memory(args, create=True) as mem:
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
        except KeyboardInterrupt:
            raise KeyboardInterrupt(
                "what was written stays; run the same command again to resume the load"
            ) from None
        finally:
            show.close()
    _print(args, report.model_dump(), _load_text(report))
    return 1 if report.error_count else 0


def _load_text(report: Any) -> str:
    if report.already_loaded:
        lines = [
            f"{report.path} is already loaded for user {report.user_id!r} "
            "(--restart reads it again)"
        ]
    else:
        lines = [
            f"loaded {plural(report.facts_added, 'fact')} "
            f"({plural(report.entities_added, 'new entity', 'new entities')}, "
            f"{report.entities_updated} updated) for user {report.user_id!r} in "
            f"{report.seconds:.1f} s ({report.facts_per_s:.1f} facts/s)"
            + ("; resumed" if report.resumed else ""),
            f"{plural(report.facts_already_stored, 'fact was', 'facts were')} already stored",
        ]
        if report.names_read:
            lines.append(f"{plural(report.names_read, 'label')} named entities")
        if report.facts_repeated:
            lines.append(
                f"{plural(report.facts_repeated, 'line')} repeated a fact of an earlier line "
                "(each fact stored once)"
            )
    if report.error_count:
        lines.append(f"{plural(report.error_count, 'bad line')}, not loaded:")
    lines += report.errors[:20]
    if report.error_count > 20:
        lines.append(f"... and {report.error_count - 20} more (--json lists the first 100)")
    return "\n".join(lines)


def _version() -> str:
    """The installed package's version; a source tree run without installing has none."""
    try:
        return metadata.version("graphmem")
    except metadata.PackageNotFoundError:
        return "(not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="graphmem",
        description="Graph-first long-term memory for LLM agents. The embedded store lives in "
        "~/.graphmem unless --data-dir or GRAPHMEM_HOME (or GRAPHMEM_DATA_DIR) says otherwise.",
        epilog=EXIT_STATUS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--data-dir", help=COMMON_HELP["--data-dir"], **DATA_DIR)
    parser.add_argument("--json", action="store_true", help=COMMON_HELP["global --json"])
    parser.add_argument("--version", action="version", version=f"graphmem {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = sub.add_parser(
        "demo",
        help="store a small example graph and search it",
        description="Store a small example graph as user demo-alice and search it. What "
        "demo-alice held before is replaced; other users are left as they are.",
    )
    demo.add_argument("--limit", type=count(), default=3, help="facts shown per query (default 3)")
    demo.set_defaults(func=cmd_demo)
    register_add(sub)
    register_reads(sub)
    register_edits(sub)
    ingest_parser(sub)
    _load_parser(sub)
    register_exchange(sub)
    add_mcp_parser(sub)
    stop = sub.add_parser("stop", help="stop the data dir's embedded server if nothing uses it")
    stop.set_defaults(func=cmd_stop)
    add_common_options(sub)
    return parser


def _load_parser(sub: Any) -> None:
    load = sub.add_parser(
        "load",
        help="bulk-load a file of triples (resumable; loading it again adds nothing)",
        description="Load triples, one `subject, predicate, object[, text]` a line, as TSV, "
        "CSV or JSONL (objects with those keys), or RDF N-Triples (entities named by their "
        "labels); any of them gzip-compressed. Bad lines are reported as FILE:LINE: reason "
        "and the rest loads. An interrupted load resumes when run again.",
        epilog="Exit status: 0 every line loaded; 1 some lines were bad (the rest loaded) or "
        "the load stopped on an error; 2 the command line was wrong; 130 interrupted (run it "
        "again to resume).",
    )
    load.add_argument("file", metavar="FILE", type=text_arg("the file"), help="the file of triples")
    load.add_argument(
        "--user", required=True, type=user_arg, help="the user whose graph receives the facts"
    )
    load.add_argument(
        "--format",
        choices=["auto", "tsv", "csv", "jsonl", "nt"],
        default="auto",
        help="what FILE is (default: told from its suffix: .tsv .tab .txt, .csv, .jsonl "
        ".ndjson, .nt .ntriples; each may end in .gz)",
    )
    load.add_argument("--delimiter", help="column separator of tsv/csv (default tab / comma)")
    load.add_argument("--restart", action="store_true", help="ignore the resume checkpoint")
    load.add_argument(
        "--chunk-size", type=count(None), default=2000, help="facts per write (default 2000)"
    )
    load.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS,
        help="print the report as JSON (no progress bar)",
    )
    load.set_defaults(func=cmd_load)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return the exit status (see `EXIT_STATUS`)."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2), already printed
        return exc.code if isinstance(exc.code, int) else 2
    func: Callable[[argparse.Namespace], int | None] = args.func
    # the Neo4j driver warns on stderr at each retry of a transaction, several lines each;
    # a failure is this command's one line (`graphmem mcp` logs them: it configures logging)
    logging.getLogger("neo4j").addHandler(logging.NullHandler())
    try:
        return func(args) or 0
    except BrokenPipeError:  # `graphmem search ... | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except UsageError as exc:
        print(f"graphmem: error: {exc}", file=sys.stderr)
        return 2
    except (GraphmemError, PartialFailure) as exc:
        print(f"graphmem: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as exc:  # a command may say how to go on (load: rerun to resume)
        print(f"graphmem: interrupted{f'; {exc}' if str(exc) else ''}", file=sys.stderr)
        return 130
