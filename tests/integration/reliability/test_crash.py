"""Crashes: `kill -9` of the Python process, or of the embedded database server, in the middle
of a run of large batch writes. The guarantee under test (docs/storage.md):
every acknowledged write survives either crash, and no batch is ever half visible.

Extends tests/integration/test_embedded_server.py (one small write, one kill) to many large
batches, two kills per process kind, and a check of every fact's two forms after recovery."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from engine.embedding import Embedder
from engine.memory import Memory
from engine.store.falkordb_server import EmbeddedServer
from tests.integration.reliability.conftest import Tally
from tests.integration.reliability.graph_checks import duplicate_keys, half_written

BATCH = 100  # facts per add_facts call: one composed write query
USER = "durable"
WRITER = textwrap.dedent(
    """
    import sys
    from engine import Memory
    from tests.integration.reliability.test_crash import BATCH, USER
    data_dir, first = sys.argv[1], int(sys.argv[2])
    mem = Memory(data_dir=data_dir)
    for i in range(first, first + 1000):
        facts = [(f"Item {i}-{j}", "PART_OF", f"Batch {i}") for j in range(BATCH)]
        mem.add_facts(facts, user_id=USER)
        print(f"acked {i}", flush=True)
    """
)


def _write_until_acked(data_dir: Path, first: int, acks: int) -> subprocess.Popen[str]:
    """Start a writer at batch `first` and return once it has acknowledged `acks` batches,
    while it is busy with the next one."""
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(data_dir), str(first)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert proc.stdout is not None
    for i in range(first, first + acks):
        line = proc.stdout.readline().strip()
        assert line == f"acked {i}", proc.stderr.read() if proc.stderr else line
    return proc


def _recover_and_check(data_dir: Path, acked: int, embedder: Embedder) -> tuple[int, int]:
    """Open the store again (restarting the server if it died); return (batches present,
    acknowledged facts lost). Every batch must be whole or absent."""
    with Memory(data_dir=data_dir, embedder=embedder) as mem:
        facts = mem.get_all(USER, limit=1000 * BATCH)
        assert half_written(mem.store, USER) == [] and duplicate_keys(mem.store, USER) == []
    per_batch = Counter(f.object for f in facts)
    assert set(per_batch.values()) <= {BATCH}, per_batch  # no half batch
    lost = sum(BATCH - per_batch.get(f"Batch {i}", 0) for i in range(acked))
    return len(per_batch), lost


@pytest.mark.parametrize("victim", ["python", "server"])
def test_kill_9_mid_batch_keeps_every_acknowledged_batch(
    tmp_path: Path, embedder: Embedder, tally: Tally, victim: str
) -> None:
    acked = 0
    for acks in (1, 2):  # two crashes, the second on a store recovered from the first
        proc = _write_until_acked(tmp_path, acked, acks)
        if victim == "python":
            proc.send_signal(signal.SIGKILL)
        else:
            os.kill(
                int(EmbeddedServer(tmp_path).pid_file.read_text(encoding="utf-8")), signal.SIGKILL
            )
        proc.communicate(timeout=60)  # the writer dies, or fails on the lost connection
        acked += acks
        present, lost = _recover_and_check(tmp_path, acked, embedder)
        tally.faults += 1
        tally.cases += acks
        tally.lost += lost
        assert lost == 0
        assert present in (acked, acked + 1)  # the batch in flight: whole or absent
        acked = present  # the next writer continues after what is stored
