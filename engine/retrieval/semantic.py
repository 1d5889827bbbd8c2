"""The semantic leg: the facts nearest the query's vector, in one vector read.

Like every leg it starts (the read is submitted as soon as the query's vector is there) and
then finishes into its result (the facts, nearest first, each with (1 + cos) / 2).
"""

from __future__ import annotations

from concurrent.futures import Future

from engine.models import Fact
from engine.retrieval.background import BACKGROUND
from engine.retrieval.tuning import FusionParams
from engine.store.reads import Reads

Started = Future[list[tuple[Fact, float]]]


class SemanticLeg:
    def __init__(self, reads: Reads, params: FusionParams) -> None:
        self.reads = reads
        self.params = params

    def start(self, user_id: str, vector: list[float], include_invalid: bool) -> Started:
        """Submit the vector read of the `semantic_k` facts nearest `vector`."""
        k = self.params.semantic_k
        return BACKGROUND.submit(
            self.reads.vector_facts, user_id, vector, k, include_invalid=include_invalid
        )

    @staticmethod
    def finish(started: Started | None) -> list[tuple[Fact, float]]:
        """The facts the read found (none when the leg was not started)."""
        return started.result() if started is not None else []
