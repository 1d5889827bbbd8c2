"""`GraphMemoryBlock`: graphmem as a block of LlamaIndex's `Memory`.

Messages flushed from the short-term buffer are ingested with `Memory.add`; on every `get()`
the block answers with graphmem's context for the latest user message. The block never fails
the agent's turn and never loses what LlamaIndex has archived: an oversized message is stored
in pieces and searched by its end; messages a failing store cannot take become dead letters.
"""

from __future__ import annotations

import asyncio
import logging
import unicodedata
from collections.abc import Sequence
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory import BaseMemoryBlock
from pydantic import ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from engine.add.messages import record_checksum
from engine.errors import GraphmemError, InvalidInputError
from engine.ingest.chat_records import ChatRecord
from engine.ingest.deadletters import keep_messages
from engine.ingest.pipeline import DEAD_LETTERS
from engine.memory import Memory
from engine.models import SearchResult
from engine.normalize import check_user_id, split_text
from engine.prompt_block import estimate_tokens

log = logging.getLogger("graphmem")


def message_dicts(
    messages: Sequence[ChatMessage], max_chars: int | None = None
) -> list[dict[str, str]]:
    """OpenAI-format dicts of the user and assistant messages that carry text, as written
    (`Memory.add` stores them so); a message longer than `max_chars` becomes consecutive
    messages within it (nothing is cut)."""
    return [
        {"role": m.role.value, "content": piece}
        for m in messages
        if m.role in (MessageRole.USER, MessageRole.ASSISTANT)
        for piece in split_text(m.content or "", max_chars)
    ]


def latest_user_text(messages: Sequence[ChatMessage] | None) -> str | None:
    """The text of the newest user message, if any."""
    for message in reversed(messages or []):
        text = (message.content or "").strip()
        if message.role == MessageRole.USER and text:
            return text
    return None


def _problems(exc: ValidationError) -> str:
    """Each bad argument with what is wrong with it (graphmem's own words when it said)."""
    said = []
    for error in exc.errors():
        cause = error.get("ctx", {}).get("error")
        said.append(f"{'.'.join(map(str, error['loc']))}: {cause or error['msg']}")
    return "; ".join(said)


def _session_of(messages: Sequence[ChatMessage]) -> str | None:
    for message in messages:
        session = message.additional_kwargs.get("session_id")
        if isinstance(session, str):
            return session
    return None


class GraphMemoryBlock(BaseMemoryBlock[str]):
    """Long-term graph memory as a block of LlamaIndex's `Memory`.

    `aput` (called with the messages `Memory` flushes from its short-term buffer) ingests them
    with `Memory.add` for `user_id`; `aget` searches graphmem with the latest user message and
    returns `search(..., max_tokens=max_tokens).context()` (facts and messages), or "" when
    nothing is known. Blocking graphmem calls run in a worker thread so the event loop stays
    free.

    Args:
        memory: the graphmem `Memory` to read and write.
        user_id: whose graph this block reads and writes (fixed per block).
        limit: facts and messages per search at least (more when `max_tokens` holds more).
        max_tokens: the budget of the context string.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = Field(default="graph_memory", description="The name of the memory block.")
    priority: int = Field(default=1, description="Truncation priority (0 = never truncate).")
    memory: Memory = Field(description="The graphmem Memory.")
    user_id: str = Field(description="The user whose graph is read and written.")
    # strict: `search` takes no bool or text for a count
    limit: int = Field(default=10, ge=1, le=1000, strict=True)
    max_tokens: int = Field(default=256, ge=1, strict=True)
    _last: tuple[str, SearchResult] | None = PrivateAttr(default=None)  # the block it gave

    def __init__(self, **data: Any) -> None:
        """Raises:
        InvalidInputError: an argument `Memory.search` would refuse at every turn (a user id
            not in canonical form, a count that is no whole number in range), named.
        """
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise InvalidInputError(f"GraphMemoryBlock: {_problems(exc)}") from exc

    @field_validator("user_id")
    @classmethod
    def _searchable_user(cls, user_id: str) -> str:
        return check_user_id(user_id)

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        query = latest_user_text(messages)
        if query is None:
            return ""
        # an oversized message is searched by its end, where a question usually is
        query = unicodedata.normalize("NFKC", query)[-self.memory.settings.max_message_chars :]
        try:
            result = await asyncio.to_thread(
                self.memory.search, query, self.user_id, self.limit, max_tokens=self.max_tokens
            )
        except GraphmemError as exc:  # the agent's turn goes on without long-term memory
            log.warning("graphmem: the memory block has no context this turn: %s", exc)
            return ""
        if not (result.facts or result.episodes):
            return ""
        block = result.context()
        self._last = (block, result)
        return block

    async def _aput(self, messages: list[ChatMessage]) -> None:
        """LlamaIndex has archived `messages` already: whatever graphmem cannot store now is
        kept as dead letters (see `keep_messages`), never raised into the agent's turn."""
        dicts = message_dicts(messages, self.memory.settings.max_message_chars)
        if not dicts:
            return
        session_id = _session_of(messages)
        try:
            result = await asyncio.to_thread(
                self.memory.add, dicts, self.user_id, session_id=session_id, source="llama_index"
            )
        except GraphmemError as exc:
            path = self.memory.settings.data_dir.expanduser() / DEAD_LETTERS
            args = (path, self.user_id, session_id, dicts, str(exc), "llama_index", self._key)
            await asyncio.to_thread(keep_messages, *args)
            log.warning("graphmem: messages kept in %s for --retry-failed: %s", path, exc)
            return
        for error in result.errors:
            log.warning("graphmem: the memory block: %s", error)

    def _key(self, record: ChatRecord) -> str:
        return record_checksum(record, self.user_id, len(record.content))

    async def atruncate(self, content: str, tokens_to_truncate: int) -> str | None:
        """The block packed again into fewer tokens (the least relevant hits go), or for other
        content its lines dropped from the end until enough is cut."""
        lines = content.splitlines()
        if self._last is not None and self._last[0] == content:
            budget = sum(estimate_tokens(line) for line in lines) - tokens_to_truncate
            if budget < 1:
                return None
            return self._last[1].context(budget) or None
        while lines and tokens_to_truncate > 0:
            tokens_to_truncate -= estimate_tokens(lines.pop())
        return "\n".join(lines) or None
