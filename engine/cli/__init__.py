"""The `graphmem` command line: `app` builds the parser and runs a command; `read`, `verbs`,
`exchange` and `ingest_command` hold the commands that read, edit, export or import, and
ingest (each over one `Memory` method)."""

from engine.cli.app import build_parser, main

__all__ = ["build_parser", "main"]
