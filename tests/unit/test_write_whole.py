"""`write_whole` over a scripted write: what it writes again when the store found an entity or a
fact gone, and that it embeds nothing when nothing was (the real race is
tests/integration/reliability/test_vanished_entities.py)."""

from __future__ import annotations

from engine.embedding import Vector
from engine.store.base import (
    AliasRow,
    EntityRow,
    EpisodeRow,
    FactRow,
    WriteBatch,
    Written,
)
from engine.store.statements import batch_statements
from engine.store.whole import write_whole
from engine.testing import HashEmbedder


class Counting(HashEmbedder):
    """Remembers every text it embeds."""

    def __init__(self) -> None:
        super().__init__(dimension=16)
        self.texts: list[str] = []

    def encode(self, texts: list[str], show_progress: bool = False) -> Vector:
        self.texts += texts
        return super().encode(texts, show_progress)


class Script:
    """A write answering with the next of `answers`, keeping each batch it was given."""

    def __init__(self, *answers: Written) -> None:
        self.answers = list(answers)
        self.batches: list[WriteBatch] = []

    def __call__(self, batch: WriteBatch) -> Written:
        self.batches.append(batch)
        return self.answers.pop(0)


BOB = EntityRow("b", "robert", "Robert", "Person", 1.0, stored=True, aliases=("Bob",))
ACME = EntityRow("a", "acme", "Acme", None, 1.0)
FACT = FactRow("f", "b", "a", "WORKS_AT", "Robert works at Acme", 1.0)


def _batch(**extra: object) -> WriteBatch:
    return WriteBatch(
        entities=[BOB, ACME], entity_embeddings={"a": [1.0]}, facts=[FACT],
        fact_embeddings={"f": [0.5]}, **extra,  # type: ignore[arg-type]
    )  # fmt: skip


def test_nothing_is_embedded_or_written_again_when_nothing_was_gone() -> None:
    embedder, write = Counting(), Script(Written(mentions={"f": 1}, added=frozenset({"f"})))
    written = write_whole(write, embedder, _batch(), lambda uids: set(uids))
    assert written.added == {"f"} and len(write.batches) == 1 and embedder.texts == []


def test_an_entity_read_as_stored_and_gone_is_written_again_whole() -> None:
    embedder = Counting()
    write = Script(Written(stored_already=True), Written(mentions={"f": 1}))
    asked: list[list[str]] = []
    written = write_whole(write, embedder, _batch(), lambda uids: asked.append(uids) or set())
    assert asked == [["b"]] and not written.stored_already and embedder.texts == ["Robert"]
    again = write.batches[1]
    (bob,) = [e for e in again.entities if e.uid == "b"]
    assert not bob.stored and bob.on_create is not None
    assert (bob.on_create.event, bob.on_create.detail) == ("ADD", "Robert")
    assert set(again.entity_embeddings) == {"a", "b"}
    assert again.aliases == [AliasRow("b", "Bob", "bob")]
    assert again.facts == [FACT]


def test_a_batch_of_messages_its_guard_refused_is_not_written_again() -> None:
    episode = EpisodeRow("e", None, "user", "hi", 1.0, None, "c")
    write = Script(Written(stored_already=True))
    written = write_whole(write, Counting(), _batch(episodes=[episode]), lambda uids: set(uids))
    assert written.stored_already and len(write.batches) == 1


def test_a_fact_naming_an_entity_gone_is_written_again_with_it_whole() -> None:
    left_out = Written(vanished=frozenset({"f"}))
    embedder, write = Counting(), Script(left_out, Written(mentions={"f": 1}))
    written = write_whole(write, embedder, _batch(), lambda uids: {"b"})
    assert written.mentions == {"f": 1} and not written.vanished
    again = write.batches[1]
    assert [e.uid for e in again.entities] == ["a"] and again.entities[0].on_create is not None
    assert again.entity_embeddings == {"a": [1.0]}  # the batch's own: nothing embedded
    assert again.fact_embeddings == {"f": [0.5]} and embedder.texts == []


def test_what_could_not_be_written_again_is_told() -> None:
    left_out = Written(vanished=frozenset({"f"}))
    write = Script(left_out, left_out)
    written = write_whole(write, Counting(), _batch(), lambda uids: set())
    assert written.vanished == {"f"}


def test_the_entity_guard_goes_only_with_entities_read_as_stored() -> None:
    names = [name for name, _, _ in batch_statements("u", _batch())]
    assert names[:2] == ["guard_stored_entities", "merge_entities"]
    plain = WriteBatch(entities=[ACME])
    assert "guard_stored_entities" not in [n for n, _, _ in batch_statements("u", plain)]
    (_, _, params), *_ = batch_statements("u", _batch())
    assert params["rows"] == [{"uid": "b", "key": "robert"}]
