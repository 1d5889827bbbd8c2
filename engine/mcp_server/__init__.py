"""graphmem as an MCP server (`graphmem mcp`): memory tools for any MCP host.

`tools` holds the tools as plain functions over a `Memory` (no MCP types); `catalog` declares
them to the SDK; `access` decides whom a call acts for; `server` wires them into the official
`mcp` SDK (stdio, or streamable HTTP behind `http_gate`'s bearer tokens from `tokens`);
`render` turns a search result into text; `export_page` pages a graph for `export_graph`;
`command` is the `graphmem mcp` command line.
"""
