"""What tests need to talk to a real `graphmem mcp` subprocess: the console script, an
environment that loads no model from a hub and chooses no user or token, the JSON-RPC
`initialize` request a host sends first, and the one shape of a failed call's text."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

GRAPHMEM = str(Path(sys.executable).with_name("graphmem"))
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
ENV.pop("GRAPHMEM_MCP_TOKEN", None)
ENV.pop("GRAPHMEM_MCP_USER_ID", None)
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
# every failed tool call answers one line `Kind: message` (engine/mcp_server/tool_errors.py)
REFUSAL = re.compile(r"[A-Z][A-Za-z]*Error: \S[^\n]*")
