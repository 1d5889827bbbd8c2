"""`graphmem ingest`: chat logs in bulk, through `Memory.ingest`.

Exit status: 0 when everything read is stored (added now or before), 1 when some records or
messages failed (the rest went in; the summary lists them) or an error stopped the run, 2 for
a usage error (no PATH, no user chosen, a bad option), 130 when interrupted (run it again to
resume).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import Any

from engine.cli.arg_types import count, text_arg, user_arg
from engine.cli.shown import Display, Shown
from engine.errors import InvalidInputError
from engine.ingest.csvlog import check_delimiter
from engine.ingest.pipeline import MAX_CONCURRENCY
from engine.ingest.report import IngestProgress, IngestReport, summary_text
from engine.ingest.sources import check_user_choice

OK, FAILED, USAGE, INTERRUPTED = 0, 1, 2, 130
RESUME_HINT = "Run the same command again to resume (messages already stored are skipped)."
# how `engine.ingest` names an option in its errors, for the Python API: `user_id= (--user
# NAME)` (the command line's name beside it) or `format=` alone
_API_OPTION_BESIDE = re.compile(r"\b\w+=(?:True)? \((--[\w-]+(?: [A-Z]+)?)\)")
_API_OPTION = re.compile(r"\b(format|delimiter|user_id)=(?=[ ,;)]|$)")
_CLI_OPTION = {"format": "--format", "delimiter": "--delimiter", "user_id": "--user"}


def cli_words(text: str) -> str:
    """An ingest error or warning worded for the Python API, with the command line's option
    names instead: `pass format= one of (...)` is `pass --format one of (...)`, `user_id=
    (--user NAME)` is `--user NAME`.

    >>> cli_words("the record names no user; pass user_id= (--user)")
    'the record names no user; pass --user'
    """
    text = _API_OPTION_BESIDE.sub(r"\1", text)
    return _API_OPTION.sub(lambda option: _CLI_OPTION[option[1]], text)


class _Watched(Shown[IngestProgress]):
    """The progress shown (`Shown`), and the messages this run added so far: what an
    interrupted run says it stored."""

    def __init__(self, show: Display[IngestProgress] | None) -> None:
        super().__init__(show)
        self.added = 0

    def __call__(self, p: IngestProgress) -> None:
        self.added = max(self.added, p.messages_added)
        super().__call__(p)


def interrupted(added: int) -> str:
    """The last line of an interrupted run: how many messages it added, and how to resume.

    >>> interrupted(2).split(".")[0]
    'graphmem: interrupted; this run added 2 messages before it stopped'
    """
    what = {0: "no message", 1: "1 message"}.get(added, f"{added} messages")
    return f"graphmem: interrupted; this run added {what} before it stopped. {RESUME_HINT}"


def cmd_ingest(args: argparse.Namespace) -> int:
    """Run one ingest and print its summary; the exit status as the module docstring says."""
    try:
        _check_usage(args)
    except InvalidInputError as exc:
        print(f"graphmem: error: {cli_words(str(exc))}", file=sys.stderr)
        return USAGE
    missing = next((path for path in args.paths if not os.path.exists(path)), None)
    if missing is not None:  # said before the store and the extractor start
        print(f"graphmem: error: chat log {missing!r} does not exist", file=sys.stderr)
        return FAILED
    watched = _Watched(None)
    try:
        report = _run(args, watched)
    except KeyboardInterrupt:
        print(interrupted(watched.added), file=sys.stderr)
        return INTERRUPTED
    except InvalidInputError as exc:  # a file of no format it can tell, an unusable option
        raise type(exc)(cli_words(str(exc))) from exc
    _write(_summary(args, report))
    return FAILED if report.errors or report.messages_failed else OK


def _check_usage(args: argparse.Namespace) -> None:
    if not args.paths and not args.retry_failed:
        raise InvalidInputError("nothing to ingest: give at least one PATH (or --retry-failed)")
    check_user_choice(args.user, args.users_from_file, bool(args.paths))


def delimiter_arg(value: str) -> str:
    """An argparse type: a CSV column separator (`check_delimiter`); anything else is a usage
    error (status 2) before any store is opened."""
    try:
        return check_delimiter(value)
    except InvalidInputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _run(args: argparse.Namespace, watched: _Watched) -> IngestReport:
    """Ingest as `args` say, `watched` told how it goes (and showing it unless --json)."""
    from engine.ingest.progress import for_stream
    from engine.memory import Memory

    watched.show = None if args.json else for_stream()
    options: dict[str, Any] = {}
    if args.data_dir:
        options["data_dir"] = args.data_dir
    if args.concurrency > 1 and not os.environ.get("GRAPHMEM_EMBEDDING_PROCESS"):
        options["embedding_process"] = True  # a batch job: the model's passes skip the GIL
    with Memory(**options) as mem:
        try:
            return mem.ingest(
                args.paths,
                user_id=args.user,
                users_from_file=args.users_from_file,
                format=args.format,
                delimiter=args.delimiter,
                concurrency=args.concurrency,
                dry_run=args.dry_run,
                retry_failed=args.retry_failed,
                progress=watched,
            )
        finally:
            watched.close()


def _summary(args: argparse.Namespace, report: IngestReport) -> str:
    report = report.model_copy(
        update={
            "errors": [e.model_copy(update={"reason": cli_words(e.reason)}) for e in report.errors],
            "warnings": [
                w.model_copy(update={"reason": cli_words(w.reason)}) for w in report.warnings
            ],
        }
    )
    if args.json:
        return json.dumps(report.summary(), indent=2, default=str)
    text = summary_text(report)
    if args.retry_failed and not report.dead_letters_retried:  # else it is left to be guessed
        whose = f" of user {args.user!r}" if args.user else ""
        text += f"\n  no dead letters{whose} to replay in {report.dead_letter_path}"
    return text


def _write(text: str) -> None:
    """Print `text`; a reader that stopped early (`| head`) is not an error of the ingest."""
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        # what is left in the buffer would fail again when Python flushes it at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def ingest_parser(sub: Any) -> None:
    """Add the `ingest` command to the subparsers `sub`."""
    from engine.ingest import CHAT_FORMATS

    ingest = sub.add_parser(
        "ingest",
        help="add chat logs in bulk (resumable; rerunning adds nothing twice)",
        description="Add chat logs in bulk, for --user, or for the users the files name with "
        "--users-from-file. A directory or a zip archive means every chat log in it. Messages "
        "already stored are skipped, so an interrupted run resumes when run again; messages "
        "whose extraction failed are retried. Messages that fail are appended to <data "
        "dir>/dead_letters.jsonl; --retry-failed replays them. Exit status: 0 all stored, 1 "
        "some records or messages failed, 2 usage error, 130 interrupted (run the same command "
        "again to resume).",
    )
    ingest.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        type=text_arg("the path"),
        help="chat log files, directories or zip archives (a ChatGPT, Claude or Slack export in "
        "one is read as one log)",
    )
    who = ingest.add_mutually_exclusive_group()
    who.add_argument(
        "--user", type=user_arg, help="add every message for this user, whatever the file says"
    )
    who.add_argument(
        "--users-from-file",
        action="store_true",
        help="take each message's user from the file (a JSONL user_id or user field, a CSV "
        "user column, a LoCoMo sample_id)",
    )
    ingest.add_argument(
        "--format",
        choices=["auto", *CHAT_FORMATS],
        default="auto",
        help="what the logs are (default: told from each file); chatgpt and claude read an "
        "export's conversations.json, slack a workspace export's folder or zip, whatsapp a "
        "chat's exported .txt, telegram a Telegram Desktop export's result.json, discord a "
        "channel's DiscordChatExporter JSON",
    )
    ingest.add_argument(
        "--delimiter",
        type=delimiter_arg,
        help="the column separator of CSV files, one character (default a comma)",
    )
    ingest.add_argument(
        "--concurrency",
        type=count(MAX_CONCURRENCY),
        default=4,
        help=f"extractions in flight at once, 1 to {MAX_CONCURRENCY} (default 4)",
    )
    ingest.add_argument(
        "--dry-run",
        action="store_true",
        help="read and count what would be added; no LLM call, no write",
    )
    ingest.add_argument(
        "--retry-failed",
        action="store_true",
        help="also replay the dead letters of earlier runs (with --user: that user's)",
    )
    ingest.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS,
        help="print the report as JSON (no progress bar)",
    )
    ingest.set_defaults(func=cmd_ingest)
