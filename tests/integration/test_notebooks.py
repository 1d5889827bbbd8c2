"""Every notebook runs top to bottom with no network and draws its pictures."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat import NotebookNode

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
# pictures each notebook must draw (image/png outputs)
PICTURES = {"quickstart.ipynb": 2, "llamaindex_agent.ipynb": 1}


def offline_env(tmp_path: Path) -> dict[str, str]:
    """The kernel's environment: offline model hub, no LLM configured, a private graphmem home
    and temporary folder."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "NEO4J_"))}
    (tmp_path / "tmp").mkdir(exist_ok=True)
    env.update(
        TMPDIR=str(tmp_path / "tmp"),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
        GRAPHMEM_HOME=str(tmp_path / "home"),
        MPLBACKEND="module://matplotlib_inline.backend_inline",
        PYTHONWARNINGS="ignore",
    )
    env.pop("GRAPHMEM_STORE", None)
    return env


FIRST_FACT = {"quickstart.ipynb": "John has a dog named Tommy"}
# a cell's source -> what its output must hold: the LlamaIndex loop's last prompt carries the
# graph memory block that answers its question (it had none: the block did not fit the buffer)
CELL_SHOWS = {
    "llamaindex_agent.ipynb": ("print(prompt[0].content)", ("<graph_memory>", "dog named Tommy"))
}


def outputs(nb: NotebookNode) -> list[NotebookNode]:
    return [out for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs]


def test_every_notebook_is_listed() -> None:
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == sorted(PICTURES)


@pytest.mark.parametrize("name", sorted(PICTURES))
def test_notebook_is_committed_without_outputs(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    assert outputs(nb) == []
    assert all(cell.get("execution_count") is None for cell in nb.cells if cell.cell_type == "code")


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PICTURES))
def test_notebook_runs_and_draws(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    for key, value in offline_env(tmp_path).items():
        monkeypatch.setenv(key, value)
    for key in [k for k in os.environ if k.startswith(("OPENAI_", "NEO4J_"))]:
        monkeypatch.delenv(key)
    client = NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()  # raises CellExecutionError on the first failing cell

    produced = outputs(nb)
    pictures = [out for out in produced if "image/png" in out.get("data", {})]
    assert len(pictures) == PICTURES[name]
    assert all(len(out["data"]["image/png"]) > 10_000 for out in pictures)  # not an empty canvas
    assert not [out for out in produced if out.output_type == "error"]
    text = "".join(out.get("text", "") for out in produced if out.output_type == "stream")
    assert "Tommy" in text
    if name in FIRST_FACT:  # the search cell's first fact answers its question
        searched = [c for c in nb.cells if c.cell_type == "code" and "mem.search(" in c.source]
        first = "".join(out.get("text", "") for out in searched[0].outputs).splitlines()[0]
        assert first.endswith(FIRST_FACT[name])
    if name in CELL_SHOWS:
        source, expected = CELL_SHOWS[name]
        cell = next(c for c in nb.cells if c.cell_type == "code" and c.source.strip() == source)
        shown = "".join(out.get("text", "") for out in cell.outputs)
        assert all(part in shown for part in expected), shown
    assert not list((tmp_path / "tmp").glob("*/appendonlydir"))  # the notebook removed its store
