"""graphmem as an MCP server (`graphmem mcp`): memory tools for any MCP host.

`tools` holds the tools as plain functions over a `Memory` (no MCP types); `render` turns a
search result into text an LLM reads well; `server` wires both into the official `mcp` SDK
(stdio, or streamable HTTP on 127.0.0.1).
"""
