"""Many messages, several prompts: a batch longer than `max_messages_per_prompt` is extracted
in consecutive slices, one extractor call each, their outcomes merged into one."""

from __future__ import annotations

from engine.extraction.schema import (
    ChatMessage,
    Extraction,
    ExtractionOutcome,
    Extractor,
    KnownFact,
)


def extract_in_prompts(
    extractor: Extractor,
    messages: list[ChatMessage],
    known: list[KnownFact],
    *,
    user_name: str | None,
    per_prompt: int,
) -> ExtractionOutcome:
    """One outcome for `messages`, from slices of at most `per_prompt` of them, each seeing
    the `known` facts. A slice that fails ends the batch: the outcome carries its error (the
    whole batch is kept as failed, to be retried whole) and the calls spent so far."""
    if len(messages) <= per_prompt:
        return extractor.extract(messages, known, user_name=user_name)
    merged = ExtractionOutcome(mode="none")
    for start in range(0, len(messages), per_prompt):
        part = messages[start : start + per_prompt]
        outcome = extractor.extract(part, known, user_name=user_name)
        _merge(merged, outcome)
        if outcome.error is not None:
            end = start + len(part)
            merged.error = f"messages {start + 1}-{end} of {len(messages)}: {outcome.error}"
            merged.extraction = Extraction()
            break
    return merged


def _merge(into: ExtractionOutcome, outcome: ExtractionOutcome) -> None:
    found, more = into.extraction, outcome.extraction
    found.entities += more.entities
    found.facts += more.facts
    found.invalidations += more.invalidations
    into.llm_calls += outcome.llm_calls
    into.prompt_tokens += outcome.prompt_tokens
    into.completion_tokens += outcome.completion_tokens
    into.latency_ms += outcome.latency_ms
    into.mode = outcome.mode
