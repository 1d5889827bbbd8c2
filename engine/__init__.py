"""graphmem: graph-first long-term memory for LLM agents."""

from engine.async_memory import AsyncMemory
from engine.config import Settings
from engine.errors import (
    ConfigError,
    ExtractionError,
    GraphmemError,
    InvalidInputError,
    LimitExceededError,
    NotFoundError,
    QueryError,
    StoreError,
    StoreUnavailableError,
)
from engine.knowledge import EntityView
from engine.memory import Memory
from engine.models import (
    AddResult,
    Deleted,
    Entity,
    Episode,
    Fact,
    FactInput,
    HistoryEvent,
    Path,
    ScoredEntity,
    ScoredFact,
    SearchResult,
    Stats,
    UserSummary,
)
from engine.ranking import RankingParams

__all__ = [
    "AddResult",
    "AsyncMemory",
    "ConfigError",
    "Deleted",
    "Entity",
    "EntityView",
    "Episode",
    "ExtractionError",
    "Fact",
    "FactInput",
    "GraphmemError",
    "HistoryEvent",
    "InvalidInputError",
    "LimitExceededError",
    "Memory",
    "NotFoundError",
    "Path",
    "QueryError",
    "RankingParams",
    "ScoredEntity",
    "ScoredFact",
    "SearchResult",
    "Settings",
    "Stats",
    "StoreError",
    "StoreUnavailableError",
    "UserSummary",
]
