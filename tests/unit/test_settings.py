"""Settings: the ranking parameters nested in them, one source of each default."""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest

from engine.config import build_settings
from engine.errors import ConfigError, InvalidInputError
from engine.memory import Memory
from engine.ranking import RankingParams


def test_ranking_params_are_set_as_a_nested_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHMEM_RANKING__FUSION__RRF_K", "50")
    settings = build_settings(ranking={"expansion": {"hub_degree": 8}})
    assert settings.ranking.expansion.hub_degree == 8
    assert build_settings().ranking.fusion.rrf_k == 50
    assert build_settings().ranking.anchors == RankingParams().anchors


def test_ranking_params_are_frozen_and_checked() -> None:
    params = RankingParams()
    with pytest.raises(FrozenInstanceError):
        params.fusion.rrf_k = 1  # type: ignore[misc]
    with pytest.raises(ConfigError) as caught:
        build_settings(ranking={"fusion": {"rrf_kk": 50}})
    assert "ranking.fusion.rrf_kk" in str(caught.value)


def test_a_setting_that_moved_into_ranking_says_where(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError) as caught:
        build_settings(expansion_fanout=10)
    assert "expansion_fanout is now ranking.expansion.fanout" in str(caught.value)
    monkeypatch.setenv("GRAPHMEM_RRF_K", "50")
    with pytest.raises(ConfigError) as from_env:
        build_settings()
    assert "GRAPHMEM_RRF_K is now GRAPHMEM_RANKING__FUSION__RRF_K" in str(from_env.value)


def test_a_private_ranking_number_is_refused_by_name() -> None:
    """Only the public numbers of `RankingParams` are settings; the private ones (in
    engine/retrieval/tuning.py) are refused with their name."""
    with pytest.raises(ConfigError) as caught:
        build_settings(ranking={"relations": {"order_cost": 0.5}})
    assert "ranking.relations is not one of the public ranking numbers" in str(caught.value)
    with pytest.raises(ConfigError) as fusion:
        build_settings(ranking={"fusion": {"tail_vote": 0.2}})
    assert "ranking.fusion.tail_vote is not one of the public" in str(fusion.value)


@pytest.mark.parametrize(
    ("types", "named"),
    [
        ({"entities": {"company": "lower case"}}, "'company' cannot be a label"),
        ({"entities": {"Entity": "graphmem's own"}}, "'Entity' cannot be a label"),
        ({"relations": {"works at": "not snake"}}, "(e.g. WORKS_AT)"),
        ({"relations": {"9LIVES": "a digit first"}}, "must start with a letter"),
        ({"entities": {"Company": "x" * 301}}, "at most 300"),
        ({"kinds": {}}, "kinds"),
    ],
)
def test_a_bad_type_declaration_is_refused_naming_it(types: dict[str, object], named: str) -> None:
    with pytest.raises(ConfigError, match="graph_types") as raised:
        build_settings(graph_types=types)
    assert named in str(raised.value)


@pytest.mark.parametrize(
    ("types", "says"),
    [
        (
            {"entitys": {"Company": "a business"}},
            "graph_types.entitys is not a key of graph_types (entities, relations, "
            "only_declared_relations) (did you mean graph_types.entities?)",
        ),
        ({"only_declared": True}, "(did you mean graph_types.only_declared_relations?)"),
    ],
)
def test_a_misspelt_key_of_graph_types_names_the_keys_it_takes(
    types: dict[str, object], says: str
) -> None:
    """It said "graph_types.entitys is not a setting (did you mean graph_types?)": the
    setting it suggested was the one given."""
    with pytest.raises(ConfigError) as raised:
        build_settings(graph_types=types)
    assert says in str(raised.value) and "did you mean graph_types?" not in str(raised.value)


def test_a_reserved_type_is_refused_naming_every_reserved_label() -> None:
    """docs/api.md lists the labels graphmem keeps for itself; the error names them all, so
    a user refused for `MessageIndex` learns why (it was missing from the list)."""
    with pytest.raises(ConfigError) as raised:
        build_settings(graph_types={"entities": {"MessageIndex": "an index of messages"}})
    assert "'MessageIndex' cannot be a label" in str(raised.value)
    reserved = "Entity, Episode, Fact, GraphmemKey, GraphmemSchema, History, MessageIndex, "
    assert reserved + "RelationVectors" in str(raised.value)


def test_declared_types_are_read_from_the_environment_as_json(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    declared = '{"entities": {"Company": "a business"}, "only_declared_relations": true}'
    monkeypatch.setenv("GRAPHMEM_GRAPH_TYPES", declared)
    types = build_settings().graph_types
    assert (types.entities, types.only_declared_relations) == ({"Company": "a business"}, True)
    assert types.entity_type("company") == "Company" and types.entity_type("City") is None


def test_settings_and_keyword_settings_together_are_refused_naming_the_keywords(
    tmp_path: Path,
) -> None:
    """`Memory(settings, data_dir=...)` ignored data_dir unseen (and opened ~/.graphmem)."""
    with pytest.raises(InvalidInputError, match="settings and data_dir given together"):
        Memory(build_settings(data_dir=tmp_path), data_dir=tmp_path / "other")
    assert not (tmp_path / "other").exists()


def test_the_data_dir_is_read_from_either_environment_name(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """GRAPHMEM_DATA_DIR (the name every setting's pattern gives) and GRAPHMEM_HOME (the one
    documented) both set the data dir; HOME wins when both are set, an argument over both."""
    monkeypatch.setenv("GRAPHMEM_DATA_DIR", str(tmp_path / "data"))
    assert build_settings().data_dir == tmp_path / "data"
    monkeypatch.setenv("GRAPHMEM_HOME", str(tmp_path / "home"))
    assert build_settings().data_dir == tmp_path / "home"
    assert build_settings(data_dir=tmp_path / "given").data_dir == tmp_path / "given"


@pytest.mark.parametrize("blank", ["", "   "])
def test_a_blank_data_dir_is_refused_not_read_as_the_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, blank: str
) -> None:
    """`Memory(data_dir="")` (an unset variable of the caller's) opened ~/.graphmem, the
    store every other default shares; the CLI refuses `--data-dir ""` the same way."""
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(ConfigError, match=r"data_dir: .*empty or only whitespace"):
        build_settings(data_dir=blank)
    with pytest.raises(ConfigError, match="empty or only whitespace"):
        Memory(data_dir=blank)
    assert not (tmp_path / ".graphmem").exists()
    monkeypatch.setenv("GRAPHMEM_HOME", "")  # an empty variable is unset, as every other
    assert build_settings().data_dir == tmp_path / ".graphmem"
