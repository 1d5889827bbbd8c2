"""graphmem's error tree. Every error the engine raises derives from `GraphmemError`.

GraphmemError
├── ConfigError            settings that cannot work (bad URI, missing package)
├── InvalidInputError      a value the caller passed is unusable (empty name, bad predicate)
│   └── LimitExceededError a value is over a configured limit (message size, facts per call)
├── StoreError             the graph database failed or cannot be reached
│   ├── StoreUnavailableError   cannot start or connect to the database
│   │   └── ClosedError         the Memory (or store) was closed
│   └── QueryError              the database rejected a query
│       └── QueryTimeoutError   a read ran longer than `query_timeout_ms` and was stopped
├── NotFoundError          an id that does not exist (for this user)
└── ExtractionError        the LLM or the offline extractor failed for good
"""

from __future__ import annotations


class GraphmemError(Exception):
    """Base class of every error graphmem raises."""


class ConfigError(GraphmemError):
    """The configuration cannot work."""


class InvalidInputError(GraphmemError, ValueError):
    """A value passed to graphmem is unusable; the message names the value and the reason."""


class LimitExceededError(InvalidInputError):
    """A value is larger than a configured limit."""


class StoreError(GraphmemError):
    """The graph database failed."""


class StoreUnavailableError(StoreError):
    """The graph database cannot be started or reached."""


class ClosedError(StoreUnavailableError):
    """The `Memory` was closed; open a new one."""


class QueryError(StoreError):
    """The graph database rejected a query."""


class QueryTimeoutError(QueryError):
    """A query ran longer than `query_timeout_ms` and the database stopped it."""


class NotFoundError(GraphmemError, KeyError):
    """No such id for this user."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class ExtractionError(GraphmemError):
    """Extraction failed after all retries."""
