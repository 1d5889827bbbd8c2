"""What the chat-log readers produce: a `ChatRecord` per message and a `ReadError` per bad one."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from pathlib import PurePath
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from engine.errors import InvalidInputError

#: The chat-log formats the readers know (`ReadResult.format`).
ChatFormat = Literal[
    "openai-jsonl",
    "sharegpt",
    "locomo",
    "csv",
    "chatgpt",
    "claude",
    "slack",
    "whatsapp",
    "telegram",
    "discord",
]
#: What `format=` may name: a `ChatFormat`, or "auto" to detect it.
IngestFormat = Literal["auto", ChatFormat]
#: Roles a `ChatRecord` may carry (OpenAI's chat roles), and a message given to `add`.
ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
#: Other APIs' words for them: LangChain's message types, Gemini's role of the model.
ROLE_ALIASES = {"human": "user", "ai": "assistant", "model": "assistant"}
_NOT_A_ROLE = (
    "a message's role is one of {roles} (in any case; human, ai and model are read as user, "
    "assistant and assistant); a speaker's name goes in 'name', "
    'as in {{"role": "user", "name": "Ann", "content": "..."}}'
)

# `D1:3`, plus the malformed spellings found in LoCoMo: `D:11:26`, `D30:05`.
_DIA_ID = re.compile(r"D:?(\d+):(\d+)")
_EVIDENCE_SEPARATORS = re.compile(r"[\s;,]+")


def known_role(value: str) -> str:
    """`value` as the one of `ROLES` it names, whatever its case: "User" is "user", and
    LangChain's "human" and "ai" and Gemini's "model" are "user" and "assistant".

    Raises:
        InvalidInputError: `value` names no role of `ROLES` (a name, "robot"): an error naming
            it, the roles there are, and where a speaker's name goes.
    """
    role = value.strip().casefold()
    role = ROLE_ALIASES.get(role, role)
    if role not in ROLES:
        roles = ", ".join(sorted(ROLES))
        raise InvalidInputError(f"unknown role {value!r}: {_NOT_A_ROLE.format(roles=roles)}")
    return role


class ChatRecord(BaseModel):
    """One chat message, ready to ingest.

    `source` is the provenance: `<file name>:<line>` for line-based formats (with `#<message>`
    when a line or record holds a whole conversation) and the `dia_id` (`D1:3`) for LoCoMo.
    `positional` says the source is only where the record sits in its input (a line, a record
    number), which moves when a log grows at the top, is renamed or re-sorted; the readers of
    JSONL, CSV and ShareGPT set it, a LoCoMo `dia_id` or a source a caller gives is an id.
    `exported_id` says the source is the id the exporting app gave the message (a ChatGPT
    message id, a Claude `uuid`, a Slack `<channel>:<ts>`): the message is that id whatever
    its text shows (edited since, a name it mentions renamed, its markup rendered anew); the
    ChatGPT, Claude and Slack readers set it.
    `ts` is always timezone-aware UTC; naive datetimes are taken to be UTC.
    """

    model_config = ConfigDict(frozen=True)

    user_id: str | None = None
    session_id: str | None = None
    role: str
    content: str
    ts: datetime | None = None
    speaker: str | None = None
    source: str
    positional: bool = False
    exported_id: bool = False
    conversation_id: str | None = None
    metadata: dict[str, str] = Field(default_factory=dict)

    @field_validator("role")
    @classmethod
    def _known_role(cls, value: str) -> str:
        if value not in ROLES:
            raise ValueError(f"unknown role {value!r}")
        return value

    @field_validator("content")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("content is empty")
        return value

    @field_validator("ts")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return as_utc(value) if value is not None else None

    @property
    def identified_by_time(self) -> bool:
        """True when the record's time, not its place, tells it apart: it has a `ts` and its
        `source` is `positional`. A record without a time, or whose source is an id, keeps
        its source in its identity (two "ok"s on two undated lines are two messages)."""
        return self.ts is not None and self.positional

    @property
    def checksum(self) -> str:
        """A stable id for this message: equal records give equal checksums across runs.

        The sha256 hex digest of a compact JSON array encoded as UTF-8, where `ts` is the
        ISO 8601 UTC string (`2023-05-08T13:56:00+00:00`) or null:
        `["id", user_id, session_id, source]` when `exported_id` (the export's own id, not the
        text), `[user_id, session_id, role, speaker, content, ts]` when `identified_by_time`
        (the turn a reader would take for a repeat: the same line moved, or read from a
        renamed file, keeps its checksum), else `[user_id, session_id, role, content, ts,
        source]`. Conversation id and metadata never take part.
        """
        ts = self.ts.isoformat() if self.ts is not None else None
        r = self
        fields: list[str | None]
        if self.exported_id:
            fields = ["id", r.user_id, r.session_id, r.source]
        elif self.identified_by_time:
            fields = [r.user_id, r.session_id, r.role, r.speaker, r.content, ts]
        else:
            fields = [r.user_id, r.session_id, r.role, r.content, ts, r.source]
        payload = json.dumps(fields, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


class _ReadNote(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    location: str = Field(description="`line N`, `record N`, a LoCoMo dia_id, or `file`")
    reason: str

    def __str__(self) -> str:
        return f"{located(self.path, self.location)}: {self.reason}"


def located(path: str, location: str) -> str:
    """`path` and `location` in one `file:line` style: `chat.jsonl:7`, `chat.json:3#2`,
    `chat.jsonl:3 message 2`; a location that is no line is kept apart (`lc.json: conv D1:2`).

    >>> located("logs/chat.jsonl", "line 7"), located("logs/chat.jsonl", "chat.jsonl:7")
    ('logs/chat.jsonl:7', 'logs/chat.jsonl:7')
    """
    if location == "file":
        return path
    if location.startswith("line "):
        return f"{path}:{location.removeprefix('line ')}"
    name = PurePath(path).name
    if name and location.startswith(f"{name}:"):
        return f"{path}{location[len(name) :]}"
    return f"{path}: {location}"


class ReadError(_ReadNote):
    """A record (or a whole file) that could not be read, and why."""


class ReadWarning(_ReadNote):
    """Something wrong with a record that was kept anyway (an unreadable time, an unknown
    speaker, an image-only turn read from its caption), and what was done about it."""


class ReadResult(BaseModel):
    """Everything read from one file, in file order, with the errors and warnings met on the
    way (a warning's record is among `records`; an error's is not)."""

    records: list[ChatRecord]
    errors: list[ReadError]
    format: str
    warnings: list[ReadWarning] = Field(default_factory=list)

    def in_time_order(self) -> list[ChatRecord]:
        """The records sorted by timestamp; ties and undated records keep file order (last)."""
        dated = sorted((r for r in self.records if r.ts is not None), key=_ts_key)
        return dated + [r for r in self.records if r.ts is None]


class LocomoQuestion(BaseModel):
    """One LoCoMo benchmark question with its evidence turns.

    `answer` is None for the adversarial questions (category 5) that have none: the data gives
    them only an `adversarial_answer`, the plausible but wrong answer a model should not give.
    """

    sample_id: str
    question: str
    answer: str | None
    adversarial_answer: str | None = None
    evidence: list[str] = Field(description="dia_ids normalized to `D<session>:<turn>`")
    category: int = Field(
        description="1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial"
    )

    @field_validator("evidence", mode="before")
    @classmethod
    def _normalize(cls, value: object) -> list[str]:
        if not isinstance(value, list):
            raise ValueError("evidence must be a list of dia_ids")
        return normalize_evidence(value)


def normalize_evidence(values: list[object]) -> list[str]:
    """Normalize LoCoMo evidence to `D<session>:<turn>` ids, in order, without duplicates.

    An entry may hold several ids (`"D8:6; D9:17"`); malformed ids are repaired (`D:11:26` ->
    `D11:26`, `D30:05` -> `D30:5`) and tokens that name no turn (`"D"`) are dropped.

    >>> normalize_evidence(["D:11:26", "D30:05", "D8:6; D9:17", "D"])
    ['D11:26', 'D30:5', 'D8:6', 'D9:17']
    """
    out: list[str] = []
    for value in values:
        tokens = _EVIDENCE_SEPARATORS.split(value) if isinstance(value, str) else []
        for token in tokens:
            match = _DIA_ID.fullmatch(token)
            dia_id = f"D{int(match[1])}:{int(match[2])}" if match else None
            if dia_id is not None and dia_id not in out:
                out.append(dia_id)
    return out


def as_utc(value: datetime) -> datetime:
    """`value` in UTC; a naive datetime is taken to be UTC already."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def _ts_key(record: ChatRecord) -> datetime:
    assert record.ts is not None  # only dated records are sorted
    return record.ts
