"""Facts of LLM quality without an LLM: LoCoMo's own observations as the extractor's input.

LoCoMo gives, per session and speaker, observations written by an LLM from the conversation,
each with the turn (`dia_id`) it restates ("Caroline attended an LGBTQ support group
recently ...", D1:3). `ObservationExtractor` reads a turn's observations instead of its text,
with the offline extractor's rules (clean third-person sentences are what those rules read
best), and nothing for a turn with none (as an LLM extracts nothing from "Keep it up!"). The
graph then holds the facts a good LLM extractor would write, from the turns it would write
them from: what the fact legs and fusion do with them is measured with no model here.
Questions were written from the same conversations, so this is a measure of what better facts
allow, not a result to set beside other systems'.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from engine.extraction.offline.extractor import OfflineExtractor
from engine.extraction.schema import ChatMessage, ExtractionOutcome, KnownFact


def observations_by_turn_text(path: Path) -> dict[str, list[str]]:
    """Each turn's text (stripped) -> the observations that cite it, over every conversation."""
    said: dict[str, list[str]] = defaultdict(list)
    for conversation in json.loads(path.read_text(encoding="utf-8")):
        turns = {
            turn["dia_id"]: turn["text"].strip()
            for key, session in conversation["conversation"].items()
            if key.startswith("session_") and isinstance(session, list)
            for turn in session
        }
        for by_speaker in conversation.get("observation", {}).values():
            for items in by_speaker.values():
                for text, cited in items:
                    for dia_id in cited if isinstance(cited, list) else [cited]:
                        if dia_id in turns:
                            said[turns[dia_id]].append(text)
    return dict(said)


class ObservationExtractor:
    """An `Extractor` that reads each message's observations, not the message (see above)."""

    name = "observations"

    def __init__(self, path: Path) -> None:
        self._said = observations_by_turn_text(path)
        self._rules = OfflineExtractor()

    def extract(
        self, messages: list[ChatMessage], known: list[KnownFact], *, user_name: str | None
    ) -> ExtractionOutcome:
        swapped = []
        for message in messages:
            said = self._said.get(message.content.strip())
            if said:
                swapped.append(message.model_copy(update={"content": " ".join(said)}))
        if not swapped:
            return ExtractionOutcome(mode="offline")
        return self._rules.extract(swapped, known, user_name=user_name)
