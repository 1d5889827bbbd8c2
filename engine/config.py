"""Settings, built once at the edge (`Memory()`), from arguments and the environment."""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from engine.errors import ConfigError
from engine.graph_types import GraphTypes
from engine.ranking import RankingParams

# a search's caches (see `Settings`); engine.retrieval.tuning reads the same defaults
SEARCH_REFRESH_S = 30.0
SEARCH_CACHED_VECTORS = 50_000
SEARCH_CACHED_USERS = 64


def _default_home() -> Path:
    return Path.home() / ".graphmem"


NEO4J_CONNECT_TIMEOUT_S = 5.0


class Settings(BaseSettings):
    """Every setting graphmem has. Environment variables: `GRAPHMEM_<NAME>`, plus the
    conventional `NEO4J_*` and `OPENAI_*` names for the Neo4j and LLM settings."""

    model_config = SettingsConfigDict(
        env_prefix="GRAPHMEM_",
        env_nested_delimiter="__",
        extra="forbid",
        populate_by_name=True,
        env_ignore_empty=True,  # OPENAI_API_KEY= (as compose files and CI pass it) is unset
    )

    # storage
    store: Literal["falkordb", "neo4j"] = "falkordb"
    # GRAPHMEM_HOME, or GRAPHMEM_DATA_DIR as every other setting is named (HOME wins if both)
    data_dir: Path = Field(
        default_factory=_default_home,
        validation_alias=AliasChoices("GRAPHMEM_HOME", "GRAPHMEM_DATA_DIR"),
    )
    graph_name: str = "graphmem"
    appendfsync: Literal["always", "everysec", "no"] = "everysec"
    neo4j_uri: str | None = Field(default=None, validation_alias="NEO4J_URI")
    neo4j_user: str = Field(default="neo4j", validation_alias="NEO4J_USER")
    neo4j_password: SecretStr | None = Field(default=None, validation_alias="NEO4J_PASSWORD")
    neo4j_database: str = Field(default="neo4j", validation_alias="NEO4J_DATABASE")
    # how long opening waits for a Neo4j server that does not answer (then StoreUnavailableError)
    neo4j_connect_timeout_s: float = Field(default=NEO4J_CONNECT_TIMEOUT_S, gt=0)

    # embeddings
    embedding_model: str = "all-MiniLM-L6-v2"
    embedding_device: str = "cpu"
    # None: the runtime's own (PyTorch 16, OpenVINO 64: measured in benchmarks/README.md)
    embedding_batch_size: int | None = Field(default=None, ge=1)
    embedding_threads: int = Field(default=1, ge=0)  # 0: torch's default (see Embedder)
    embedding_short_threads: int = Field(default=0, ge=0)  # a search's passes (see Embedder)
    embedding_process: bool = False  # the model in a child process (see Embedder)
    # "auto": OpenVINO where it runs the model (3x PyTorch here), else PyTorch
    embedding_runtime: Literal["auto", "openvino", "torch"] = "auto"
    embedding_cache_dir: Path | None = None  # exported models (default ~/.cache/graphmem)
    # load the model in the background when a Memory opens (False: at its first use)
    embedding_preload: bool = True

    # LLM (any OpenAI-compatible endpoint)
    openai_api_key: SecretStr | None = Field(default=None, validation_alias="OPENAI_API_KEY")
    openai_base_url: str | None = Field(default=None, validation_alias="OPENAI_BASE_URL")
    llm_model: str = "gpt-4o-mini"
    # a preset for the server (structured-output mode, length parameter, default base URL);
    # "auto": OpenAI's API when no base URL is set, else detected from the server's GET /models
    llm_provider: Literal["auto", "openai", "ollama", "llamacpp", "vllm"] = "auto"
    # the structured-output mode to start from; "auto": the provider's (refusals step down)
    llm_output: Literal["auto", "tools", "json_schema", "json_object", "prompt"] = "auto"
    # the cap on one answer's length; None: from the schema's size (see default_max_tokens)
    llm_max_tokens: int | None = Field(default=None, ge=16)
    llm_timeout_s: float = Field(default=60.0, gt=0)
    llm_temperature: float = Field(default=0.0, ge=0, le=2)
    llm_max_retries: int = Field(default=3, ge=0)

    # retrieval: facts and messages a search returns by default; the numbers of the ranking
    # a user can set are in `ranking` (engine/ranking.py: GRAPHMEM_RANKING__FUSION__RRF_K=50)
    search_limit: int = Field(default=10, ge=1)
    # the least cosine similarity to the query a hit needs (None: no floor); off by default:
    # any fixed floor drops right answers phrased unlike their question
    search_min_similarity: float | None = Field(default=None, ge=-1, le=1)
    ranking: RankingParams = Field(default_factory=RankingParams)
    # what a search caches: the user's predicate list, relation samples and message index are
    # read again after this many seconds (how stale another process's writes may look; this
    # process's own writes are seen at once) ...
    search_refresh_s: float = Field(default=SEARCH_REFRESH_S, ge=0)
    # ... word and relation vectors kept in memory, and users whose message index is kept
    search_cached_vectors: int = Field(default=SEARCH_CACHED_VECTORS, ge=1)
    search_cached_users: int = Field(default=SEARCH_CACHED_USERS, ge=1)
    # process-wide changes a host may ask for, none made by default (docs/performance.md
    # measures what each saves): at the first setup, and once the offline extractor has
    # loaded spaCy, move the process's objects out of the garbage collector's view
    # (gc.freeze, once per process each; see engine/long_lived.py)
    freeze_gc: bool = False
    # the BLAS threads of the whole process while a search runs (None: left alone; see
    # engine/retrieval/blas.py)
    search_blas_threads: int | None = Field(default=None, ge=1)

    # resolution and conflicts
    resolve_threshold: float = Field(default=0.9, ge=0, le=1)
    single_valued_predicates: list[str] = Field(
        default_factory=lambda: ["HAS_NAME", "LIVES_IN", "AGE", "WORKS_AT", "BORN_ON", "MARRIED_TO"]
    )

    # the entity types and relations extraction is asked to use (engine.graph_types); in the
    # environment as JSON: GRAPHMEM_GRAPH_TYPES='{"entities": {"Company": "a business"}}'
    graph_types: GraphTypes = Field(default_factory=GraphTypes)

    # the one user `graphmem mcp` serves (its --user), and the bearer token of its HTTP
    # transport (empty: the token kept in <data dir>/mcp_tokens.json)
    mcp_user_id: str | None = None
    mcp_token: SecretStr | None = None

    # limits
    max_name_chars: int = Field(default=512, ge=1)
    max_text_chars: int = Field(default=4000, ge=1)
    max_message_chars: int = Field(default=32_000, ge=1)
    max_facts_per_call: int = Field(default=10_000, ge=1)
    # messages one `add` takes (more are refused), and one extraction prompt reads (more are
    # extracted a slice at a time: a long prompt dilutes the model's attention and its answer
    # outgrows the length cap)
    max_messages_per_add: int = Field(default=1000, ge=1)
    max_messages_per_prompt: int = Field(default=20, ge=1)
    max_query_words: int = Field(default=64, ge=1)
    # unset: sized to the memory available (engine.transfer.import_limits.machine_limits)
    max_import_bytes: int | None = Field(default=None, ge=1)
    max_import_records: int | None = Field(default=None, ge=1)
    query_timeout_ms: int = Field(default=10_000, ge=1)

    @field_validator("data_dir", mode="before")
    @classmethod
    def _absolute_data_dir(cls, value: object) -> object:
        """An absolute path (the server runs in another working directory; every process
        must name the same directory); None means the default. A blank one is refused, as
        the CLI refuses `--data-dir ""`: it is a caller's unset variable, not a wish for the
        store every default shares (an empty environment variable is unset already)."""
        if value is None:
            return _default_home()
        if isinstance(value, str | os.PathLike) and not str(value).strip():
            raise ValueError(
                "the data dir is empty or only whitespace: name a directory, or leave "
                "data_dir out for the default (~/.graphmem, GRAPHMEM_HOME)"
            )
        if isinstance(value, (str, os.PathLike)):
            return Path(value).expanduser().resolve()
        return value

    @property
    def llm_configured(self) -> bool:
        return (
            self.openai_api_key is not None
            or self.openai_base_url is not None
            or self.llm_provider != "auto"
        )


# retrieval settings that moved into `ranking` (engine/ranking.py): the old name says where
_MOVED = {
    "anchor_limit": "ranking.anchors.limit",
    "expansion_depth": "ranking.expansion.depth",
    "expansion_fanout": "ranking.expansion.fanout",
    "expansion_max_edges": "ranking.expansion.max_edges",
    "expansion_hub_scan": "ranking.expansion.hub_scan",
    "expansion_anchor_scan": "ranking.expansion.anchor_scan",
    "expansion_hub_degree": "ranking.expansion.hub_degree",
    "semantic_k": "ranking.fusion.semantic_k",
    "rrf_k": "ranking.fusion.rrf_k",
    "expansion_weight": "ranking.fusion.expansion_weight",
    "recency_half_life_days": "ranking.fusion.half_life_days",
}


def build_settings(**overrides: Any) -> Settings:
    """`Settings` from the environment and `overrides`.

    Raises:
        ConfigError: a setting is unknown or unusable, or an environment variable names a
            setting that moved into `ranking`. The message names each setting and what is
            wrong with it, never the value given: a misspelt `openai_key="sk-..."` is a
            secret that must not reach a log.
    """
    moved = [old for old in _MOVED if _env_name(old) in os.environ]
    if moved:
        where = "; ".join(f"{_env_name(old)} is now {_env_name(_MOVED[old])}" for old in moved)
        raise ConfigError(f"invalid settings: {where}")
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        problems = "; ".join(_problem(e["loc"], e["type"], e["msg"]) for e in exc.errors())
        raise ConfigError(f"invalid settings: {problems}") from None


def _env_name(setting: str) -> str:
    return "GRAPHMEM_" + setting.replace(".", "__").upper()


def _problem(loc: tuple[int | str, ...], kind: str, message: str) -> str:
    name = ".".join(str(part) for part in loc) or "settings"
    if kind == "unexpected_keyword_argument" and name.startswith("ranking."):
        return f"{name} is not one of the public ranking numbers (docs/retrieval.md lists them)"
    if kind != "extra_forbidden":
        return f"{name}: {message}"
    if name in _MOVED:
        return f"{name} is now {_MOVED[name]}"
    if len(loc) > 1:  # a key inside a setting (graph_types.entitys): its own keys are meant
        within = ".".join(str(part) for part in loc[:-1])
        keys = _keys_of(within)
        close = difflib.get_close_matches(str(loc[-1]).lower(), keys, n=1)
        hint = f" (did you mean {within}.{close[0]}?)" if close else ""
        return f"{name} is not a key of {within} ({', '.join(keys)}){hint}"
    known = [field.lower() for field in Settings.model_fields]
    close = difflib.get_close_matches(name.lower(), known, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"{name} is not a setting{hint}"


def _keys_of(setting: str) -> list[str]:
    """The keys the setting of that name takes (a model's fields), or none."""
    annotation = (
        Settings.model_fields[setting].annotation if setting in Settings.model_fields else None
    )
    fields = getattr(annotation, "model_fields", None)
    return list(fields) if isinstance(fields, dict) else []
