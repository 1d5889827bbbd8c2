"""Result rows as models, shared by the adapters' reads."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from engine.models import Entity, Fact, HistoryEvent
from engine.store.base import EpisodeText, Neighbour


def entity_pairs(rows: Iterable[list[Any]]) -> list[tuple[str, Entity]]:
    return [(row[0], Entity.from_props(row[1])) for row in rows]


def fact_from_row(row: list[Any]) -> Fact:
    return Fact.from_props(row[0], row[1], row[2])


def history_from_row(props: dict[str, Any]) -> HistoryEvent:
    return HistoryEvent(
        uid=props["uid"],
        target_uid=props["target_uid"],
        user_id=props["user_id"],
        event=props["event"],
        ts=datetime.fromtimestamp(float(props["ts"]), tz=UTC),
        episode_uid=props.get("episode_uid"),
        detail=props.get("detail"),
    )


def neighbours_from_rows(rows: Iterable[list[Any]]) -> list[Neighbour]:
    """Flatten `expand_typed` / `expand_any` rows (a node with the edges read from it)."""
    out = []
    for near, edges, degree in rows:
        for uid, predicate, outgoing, far, far_name, far_mentions, mentions in edges:
            out.append(
                Neighbour(
                    near=near,
                    uid=uid,
                    predicate=predicate,
                    outgoing=bool(outgoing),
                    far=far,
                    far_name=far_name,
                    far_mentions=int(far_mentions or 0),
                    mentions=int(mentions or 0),
                    degree=int(degree or 0),
                )
            )
    return out


def episode_texts(rows: Iterable[list[Any]]) -> tuple[list[EpisodeText], list[str | None]]:
    """`list_episode_texts` rows: the messages, and the index terms stored with each."""
    rows = list(rows)
    texts = [
        EpisodeText(
            r[0], r[1], r[2], r[3] or "user", r[4] or "", float(r[5] or 0.0), r[6], bool(r[7])
        )
        for r in rows
    ]
    return texts, [r[8] for r in rows]
