"""`graphmem stop` says which processes hold the server, once each, and answers `--json`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine import components
from engine.cli import main
from engine.config import Settings


def _stop_finding(clients: list[str], stopped: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    def stop_server(settings: Settings) -> tuple[bool, list[str]]:
        return stopped, clients

    monkeypatch.setattr(components, "stop_server", stop_server)


def test_a_process_holding_the_server_is_named_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _stop_finding(["graphmem-42", "graphmem-42", "graphmem-42", "graphmem-7"], False, monkeypatch)
    assert main(["stop", "--data-dir", str(tmp_path)]) == 1
    assert "in use by graphmem-42, graphmem-7 (" in capsys.readouterr().err


@pytest.mark.parametrize("stopped", [True, False])
def test_stop_json_is_json(
    stopped: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _stop_finding([], stopped, monkeypatch)
    assert main(["stop", "--data-dir", str(tmp_path), "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer == {"data_dir": str(tmp_path.resolve()), "stopped": stopped}
