"""The addresses an HTTP MCP server listens on: which only this machine reaches, and how a URL
writes one. Plain Python, for the checks made before the server starts and for the gate."""

from __future__ import annotations

import ipaddress


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an address) only listens on this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def url_host(host: str) -> str:
    """`host` as a URL writes it: an IPv6 address in brackets (http://[::1]:8765/mcp)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host
