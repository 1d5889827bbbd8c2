"""The parts a `Memory` is made of, built from `Settings` at the edge (nothing below reads
the environment): the store, the embedder and the extractor."""

from __future__ import annotations

import functools
import logging
import threading

from engine.config import Settings
from engine.embedding import Embedder
from engine.errors import ConfigError
from engine.extraction.schema import Extractor
from engine.long_lived import freeze_long_lived
from engine.store.base import GraphStore

log = logging.getLogger("graphmem")
_saying_offline = threading.Lock()  # functools.cache lets two first calls both run


def build_embedder(settings: Settings) -> Embedder:
    """The embedder the settings name (the model loads on first use)."""
    return Embedder(
        settings.embedding_model,
        settings.embedding_device,
        settings.embedding_batch_size,
        threads=settings.embedding_threads,
        short_threads=settings.embedding_short_threads,
        process=settings.embedding_process,
        runtime=settings.embedding_runtime,
        cache_dir=settings.embedding_cache_dir,
    )


def build_extractor(settings: Settings) -> Extractor:
    """The LLM extractor when an LLM is configured (OPENAI_API_KEY, OPENAI_BASE_URL or
    GRAPHMEM_LLM_PROVIDER), else the offline one, with a warning saying so (once a process:
    `say_offline`)."""
    if settings.llm_configured:
        from engine.extraction.llm import build_llm_extractor

        return build_llm_extractor(settings)
    from engine.extraction.offline import OfflineExtractor

    with _saying_offline:
        say_offline()
    on_load = functools.partial(freeze_long_lived, "spacy") if settings.freeze_gc else None
    return OfflineExtractor(on_load=on_load)


@functools.cache
def say_offline() -> None:
    """Warn that extraction is offline, the first time only: a process opening a `Memory`
    per request (or several at once) said it each time."""
    log.warning(
        "graphmem: no LLM configured (OPENAI_API_KEY, OPENAI_BASE_URL, or GRAPHMEM_LLM_PROVIDER "
        "for a local server: docs/local_llm.md): extraction is offline (spaCy rules, English only)"
    )


def prepare_store(settings: Settings) -> None:
    """Check (and create) the embedded store's data directory, before anything slow starts.

    Raises:
        StoreUnavailableError: the data directory is unusable (named, with the reason).
    """
    if settings.store == "falkordb":
        from engine.private_files import prepare_data_dir

        prepare_data_dir(settings.data_dir)


def open_store(settings: Settings) -> GraphStore:
    """The store the settings name: the embedded FalkorDB unless `store="neo4j"`."""
    if settings.store == "neo4j":
        from engine.store.neo4j import Neo4jStore

        if not settings.neo4j_uri:
            raise ConfigError("GRAPHMEM_STORE=neo4j needs NEO4J_URI (e.g. bolt://localhost:7687)")
        password = settings.neo4j_password.get_secret_value() if settings.neo4j_password else None
        return Neo4jStore.from_settings(
            settings.neo4j_uri,
            settings.neo4j_user,
            password,
            settings.neo4j_database,
            timeout_s=settings.query_timeout_ms / 1000.0,
            connect_timeout_s=settings.neo4j_connect_timeout_s,
        )
    from engine.store.falkordb import FalkorDBStore
    from engine.store.falkordb_server import EmbeddedServer

    server = EmbeddedServer(settings.data_dir, settings.appendfsync)
    return FalkorDBStore.embedded(server, settings.graph_name, settings.query_timeout_ms)


def stop_server(settings: Settings) -> tuple[bool, list[str]]:
    """Stop the embedded server of the settings' data directory unless another client uses
    it (compacted first, as the last `close` does).

    Returns:
        Whether a server was stopped, and the names of the clients still using it
        (`graphmem-<pid>`; then it was left running).
    """
    from engine.store.falkordb import FalkorDBStore
    from engine.store.falkordb_server import EmbeddedServer

    server = EmbeddedServer(settings.data_dir, settings.appendfsync)
    if not server.running():
        return False, []
    users = server.clients()
    if users:
        return False, users
    FalkorDBStore.embedded(server, settings.graph_name).close()
    return (False, server.clients()) if server.running() else (True, [])
