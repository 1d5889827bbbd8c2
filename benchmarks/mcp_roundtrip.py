"""The MCP round trip a host makes: spawn `graphmem mcp`, list tools, add, search (stdio).

Each run spawns a fresh server on a fresh temporary data dir (its embedded FalkorDB starts
with it). The first run warms the operating system's file cache (Python packages, the model
files); the runs after it are what a host sees once the machine has loaded the model before.

Usage: python benchmarks/mcp_roundtrip.py [--runs 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult

GRAPHMEM = str(Path(sys.executable).with_name("graphmem"))
ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
FACTS = [
    {"subject": "Alice", "predicate": "FRIEND_OF", "object": "John"},
    {
        "subject": "John",
        "predicate": "OWNS",
        "object": "Tommy",
        "text": "John has a dog named Tommy",
    },
]


async def _tool(client: ClientSession, name: str, args: dict[str, Any]) -> None:
    result = await client.call_tool(name, args, read_timeout_seconds=300)
    assert isinstance(result, CallToolResult) and not result.is_error, result


async def one_run(data_dir: Path) -> dict[str, float]:
    marks = {"start": time.perf_counter()}
    params = StdioServerParameters(
        command=GRAPHMEM, args=["--data-dir", str(data_dir), "mcp", "--user", "bench"], env=ENV
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        await client.list_tools()
        marks["listed"] = time.perf_counter()
        await _tool(client, "list_entities", {"user_id": "bench"})  # waits for the model
        marks["ready"] = time.perf_counter()
        await _tool(client, "add_facts", {"facts": FACTS, "user_id": "bench"})
        marks["added"] = time.perf_counter()
        await _tool(client, "add_memory", {"messages": "I like hiking", "user_id": "bench"})
        marks["message"] = time.perf_counter()
        await _tool(client, "search_memory", {"query": "Who owns Tommy?", "user_id": "bench"})
        marks["searched"] = time.perf_counter()
    return {
        "spawn_to_tool_list_s": marks["listed"] - marks["start"],
        "model_and_store_ready_s": marks["ready"] - marks["listed"],
        "add_facts_s": marks["added"] - marks["ready"],
        "add_memory_s": marks["message"] - marks["added"],
        "search_s": marks["searched"] - marks["message"],
        "round_trip_without_model_load_s": (marks["searched"] - marks["start"])
        - (marks["ready"] - marks["listed"]),
        "round_trip_s": marks["searched"] - marks["start"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    runs = []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="gm-mcp-") as tmp:
            runs.append(anyio.run(one_run, Path(tmp)))
    warm = runs[1:] or runs
    summary = {k: round(statistics.median(r[k] for r in warm), 3) for k in warm[0]}
    if args.json:
        print(json.dumps({"runs": runs, "median_after_first": summary}, indent=2))
        return
    for key, value in summary.items():
        print(f"{key:42s} {value:7.3f}")


if __name__ == "__main__":
    main()
