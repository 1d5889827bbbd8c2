"""The LoCoMo benchmark file: its conversations as `ChatRecord`s and its questions.

Each sample is one user (`user_id` defaults to the `sample_id`); each `session_N` is a session
whose turns all carry role `user`, the turn's speaker, and the `dia_id` as `source`.

What a turn can do without is a warning and the turn is kept: a session date that cannot be
read (its turns are undated, in file order), a missing or unknown speaker, no text beside a
shared image (the caption is the text, "[image: a dog on a beach]"). A turn given twice (same
dia_id, speaker and text: `engine.ingest.turns`) is read once, with a warning; a turn with no
text at all is an error.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from engine.errors import InvalidInputError
from engine.ingest import fields
from engine.ingest.chat_records import ChatRecord, LocomoQuestion, ReadError
from engine.ingest.fields import Item, SourceFile, StrPath
from engine.ingest.turns import Turns, repeated

_SESSION_KEY = re.compile(r"session_(\d+)")


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


@dataclass(slots=True)
class _Session:
    """One session being read: where it is, who may speak, the turns seen so far."""

    file: SourceFile
    sample_id: str
    key: str
    speakers: tuple[str, ...]  # speaker_a, speaker_b as the sample names them
    turns: Turns = field(default_factory=Turns)


def _session(
    file: SourceFile, sample_id: str, conversation: dict[str, Any], key: str
) -> Iterator[Item]:
    turns, where = conversation[key], f"{sample_id} {key}"
    if not isinstance(turns, list):
        yield file.error(where, "expected a list of turns")
        return
    notes: fields.Notes = []
    start = fields.timestamp(conversation.get(f"{key}_date_time"), notes)
    yield from (file.warning(where, f"session date: {note}") for note in notes)
    named = (conversation.get("speaker_a"), conversation.get("speaker_b"))
    session = _Session(file, sample_id, key, tuple(n for n in named if isinstance(n, str)))
    for index, turn in enumerate(turns):
        # Turns share their session's time; one second each keeps them in order.
        yield from _turn(session, turn, fields.offset(start, index), index + 1)


def _turn(session: _Session, turn: object, ts: datetime | None, number: int) -> Iterator[Item]:
    file, sample_id = session.file, session.sample_id
    dia_id = turn.get("dia_id") if isinstance(turn, dict) else None
    if not isinstance(turn, dict) or not isinstance(dia_id, str):
        where = f"{sample_id} {session.key} turn {number}"
        yield file.error(where, "expected a turn with a 'dia_id'")
        return
    where = f"{sample_id} {dia_id}"
    notes: fields.Notes = []
    metadata = {k: turn[k] for k in ("blip_caption", "query") if isinstance(turn.get(k), str)}
    record = fields.build_record(
        file,
        where,
        lambda: ChatRecord(
            user_id=file.user_id or sample_id,
            session_id=session.key,
            conversation_id=sample_id,
            role="user",
            content=_text(turn, notes),
            ts=ts,
            speaker=_speaker(turn, session.speakers, notes),
            source=dia_id,
            metadata=metadata,
        ),
    )
    if isinstance(record, ChatRecord):
        first = session.turns.repeat(record, dia_id, f"turn {number} of {session.key}")
        if first is not None:
            yield file.warning(where, repeated(first, "dia_id"))
            return
    yield from fields.noted(file, where, record, notes)


def _text(turn: dict[str, Any], notes: fields.Notes) -> str:
    """The turn's text; an image shared without words is its caption, "[image: ...]"."""
    text, caption = turn.get("text"), turn.get("blip_caption")
    blank = text is None or (isinstance(text, str) and not text.strip())
    if blank and isinstance(caption, str) and caption.strip():
        notes.append("no text: kept as its image caption")
        return f"[image: {caption.strip()}]"
    return fields.content(text)


def _speaker(turn: dict[str, Any], speakers: tuple[str, ...], notes: fields.Notes) -> str | None:
    """The turn's speaker; a missing or unknown one is kept with a note saying what it means."""
    given = turn.get("speaker")
    name = fields.speaker(given, notes)
    if name is None and (given is None or isinstance(given, str)):
        notes.append("no speaker: its self-references go to the user's own entity")
    elif name is not None and speakers and name not in speakers:
        known = " or ".join(repr(s) for s in speakers)
        notes.append(f"speaker {name!r} is not {known}; kept under that name")
    return name


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
