"""The LoCoMo benchmark file: its conversations as `ChatRecord`s and its questions.

Each sample is one user (`user_id` defaults to the `sample_id`); each `session_N` is a session
whose turns all carry role `user`, the turn's speaker, and the `dia_id` as `source`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from engine.errors import InvalidInputError
from engine.ingest import fields
from engine.ingest.fields import Item, SourceFile, StrPath
from engine.ingest.records import ChatRecord, LocomoQuestion, ReadError

_SESSION_KEY = re.compile(r"session_(\d+)")
_TIME = re.compile(r"(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})")
_MONTHS = {
    m: i
    for i, m in enumerate(
        [
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ],
        start=1,
    )
}


def parse_locomo_datetime(value: object) -> datetime | None:
    """A UTC datetime from LoCoMo's `"1:56 pm on 8 May, 2023"`; None when absent.

    Parsed by hand rather than with `strptime` so the month names do not depend on the locale.

    Raises:
        InvalidInputError: the value is present but not in that form.

    >>> parse_locomo_datetime("1:56 pm on 8 May, 2023")
    datetime.datetime(2023, 5, 8, 13, 56, tzinfo=datetime.timezone.utc)
    """
    if value is None:
        return None
    match = _TIME.fullmatch(value.strip().lower()) if isinstance(value, str) else None
    month = _MONTHS.get(match[5]) if match else None
    if match is None or month is None:
        raise InvalidInputError(f"unparseable LoCoMo date {value!r}")
    hour = int(match[1]) % 12 + (12 if match[3] == "pm" else 0)
    try:
        return datetime(int(match[6]), month, int(match[4]), hour, int(match[2]), tzinfo=UTC)
    except ValueError as exc:
        raise InvalidInputError(f"unparseable LoCoMo date {value!r}: {exc}") from exc


def read_locomo(file: SourceFile) -> Iterator[Item]:
    """Every turn of every sample, in file order (sessions by number)."""
    data = file.load_json()
    if isinstance(data, ReadError):
        yield data
        return
    if not isinstance(data, list):
        yield file.error("file", f"expected a JSON list of samples, got {type(data).__name__}")
        return
    for number, sample in enumerate(data, start=1):
        conversation = sample.get("conversation") if isinstance(sample, dict) else None
        if not isinstance(conversation, dict):
            yield file.error(f"record {number}", "expected an object with a 'conversation'")
            continue
        sample_id = str(sample.get("sample_id") or f"record-{number}")
        for key in _session_keys(conversation):
            yield from _session(file, sample_id, conversation, key)


def _session_keys(conversation: dict[str, Any]) -> list[str]:
    numbers = [m[1] for key in conversation if (m := _SESSION_KEY.fullmatch(key))]
    return [f"session_{n}" for n in sorted(numbers, key=int)]


def _session(
    file: SourceFile, sample_id: str, conversation: dict[str, Any], key: str
) -> Iterator[Item]:
    turns, where = conversation[key], f"{sample_id} {key}"
    if not isinstance(turns, list):
        yield file.error(where, "expected a list of turns")
        return
    try:
        start = parse_locomo_datetime(conversation.get(f"{key}_date_time"))
    except InvalidInputError as exc:
        yield file.error(where, str(exc))
        return
    for index, turn in enumerate(turns):
        # Turns share their session's time; one second each keeps them in order.
        yield _turn(file, sample_id, key, turn, fields.offset(start, index), index + 1)


def _turn(
    file: SourceFile, sample_id: str, key: str, turn: object, ts: datetime | None, number: int
) -> Item:
    dia_id = turn.get("dia_id") if isinstance(turn, dict) else None
    if not isinstance(turn, dict) or not isinstance(dia_id, str):
        return file.error(f"{sample_id} {key} turn {number}", "expected a turn with a 'dia_id'")
    metadata = {k: turn[k] for k in ("blip_caption", "query") if isinstance(turn.get(k), str)}
    return fields.build_record(
        file,
        f"{sample_id} {dia_id}",
        lambda: ChatRecord(
            user_id=file.user_id or sample_id,
            session_id=key,
            conversation_id=sample_id,
            role="user",
            content=fields.content(turn.get("text")),
            ts=ts,
            speaker=fields.text_id(turn.get("speaker"), "speaker"),
            source=dia_id,
            metadata=metadata,
        ),
    )


def load_locomo_qa(path: StrPath) -> list[LocomoQuestion]:
    """The benchmark questions of a LoCoMo file, in file order, evidence ids normalized.

    Raises:
        InvalidInputError: `path` is missing, or is not a LoCoMo file (a list of samples, each
            with a `qa` list of questions that have a `question` and a `category`).

    Example:
        >>> qa = load_locomo_qa("/work/shared/data/locomo/locomo10.json")  # doctest: +SKIP
        >>> qa[0].evidence  # doctest: +SKIP
        ['D1:3']
    """
    file = SourceFile.open(path)
    data = file.load_json()
    if not isinstance(data, list):
        reason = data.reason if isinstance(data, ReadError) else "not a JSON list of samples"
        raise InvalidInputError(f"{file.shown!r} is not a LoCoMo file: {reason}")
    return [q for number, sample in enumerate(data, 1) for q in _questions(file, number, sample)]


def _questions(file: SourceFile, number: int, sample: object) -> list[LocomoQuestion]:
    items = sample.get("qa") if isinstance(sample, dict) else None
    if not isinstance(sample, dict) or not isinstance(items, list):
        raise InvalidInputError(f"{file.shown!r}: record {number} has no 'qa' list")
    sample_id = str(sample.get("sample_id") or f"record-{number}")
    return [_question(file, sample_id, item) for item in items]


def _question(file: SourceFile, sample_id: str, item: object) -> LocomoQuestion:
    given: dict[str, Any] = item if isinstance(item, dict) else {}
    try:
        return LocomoQuestion.model_validate(
            {
                "sample_id": sample_id,
                "question": given.get("question"),
                "answer": _answer(given.get("answer")),
                "adversarial_answer": _answer(given.get("adversarial_answer")),
                "evidence": given.get("evidence", []),
                "category": given.get("category"),
            }
        )
    except ValidationError as exc:
        raise InvalidInputError(f"{file.shown!r}: bad question in {sample_id}: {exc}") from exc


def _answer(value: object) -> str | None:
    # A few LoCoMo answers are numbers (years, counts); the benchmark compares text.
    return None if value is None else str(value)
