"""The types of the `graphmem` commands' arguments: each reads one value as every door reads
it, and anything else is a usage error (status 2), said in one line before any store is
opened."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import datetime

from engine.errors import InvalidInputError
from engine.normalize import canonical_text, check_count, check_user_id
from engine.prompt_block import MAX_LIMIT
from engine.times import parse_time

TIME_FORMS = "ISO 8601, epoch seconds or milliseconds"  # what `when` reads, said in --help


def count(most: int | None = MAX_LIMIT) -> Callable[[str], int]:
    """An argparse type: a whole number from 1 (to `most`); anything else is a usage error
    (status 2), said in one line before any store is opened."""
    bounds = f"from 1 to {most}" if most else "of at least 1"

    def parse(value: str) -> int:
        try:
            return check_count(int(value), "count", 1, most)
        except (ValueError, InvalidInputError):
            raise argparse.ArgumentTypeError(f"{value!r} is not a whole number {bounds}") from None

    return parse


def when(value: str) -> datetime:
    """An argparse type: a time as every door reads it (`engine.times`: ISO 8601, epoch seconds
    or milliseconds, a dated text such as 29.12.2023); anything else, or a time out of range
    (1e400, nan), is a usage error (status 2) before any store is opened."""
    try:
        parsed = parse_time(value, "time")
    except InvalidInputError:
        parsed = None
    if parsed is None:
        raise argparse.ArgumentTypeError(
            f"{value!r} is no time: give ISO 8601 (2024-05-01, 2024-05-01T09:30) or epoch "
            "seconds or milliseconds"
        )
    return parsed


def user_arg(value: str) -> str:
    """An argparse type: a user id every door takes (`check_user_id`); anything else is a
    usage error (status 2) before any store is opened."""
    try:
        return check_user_id(value)
    except InvalidInputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def held_user_arg(value: str) -> str:
    """`user_arg` for a command that reads or deletes what a user holds: an id holding an
    invisible format character is left to `Memory`, which takes it when the store holds it
    (an older version stored it: `graphmem users` shows it escaped, `$'alice\\u200b'`)."""
    try:
        return check_user_id(value, held=lambda _: True)
    except InvalidInputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def text_arg(what: str) -> Callable[[str], str]:
    """An argparse type: text a command needs (a query, a message, an id, a name, a file), or
    an optional text given (`--speaker`, `--data-dir`: given blank, it is a mistake, not the
    option left out); empty or only whitespace is a usage error (status 2) saying `what`,
    before any store is opened, as every command's other arguments are."""

    def parse(value: str) -> str:
        if not canonical_text(value):
            raise argparse.ArgumentTypeError(f"{what} is empty or only whitespace")
        return value

    return parse
