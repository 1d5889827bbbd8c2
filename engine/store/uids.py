"""How message uids are ordered and split into ranges, for reading a large user in parts."""

from __future__ import annotations

# every uid is in ["", LAST_UID): graphmem writes uids as hex digests, and every ASCII string
# sorts before DEL (an index of FalkorDB's compares non-ASCII bounds unlike its queries do)
LAST_UID = "\x7f"
ALL_UIDS = ("", LAST_UID)


def uid_ranges(count: int, page: int) -> list[tuple[str, str]]:
    """Ranges of uids that together hold every uid, for reading `count` records about
    `page` at a time: split on leading hex digits (a uid is a hex digest, so the ranges hold
    about as many each)."""
    width = 0
    while count > page * 16**width and width < 4:
        width += 1
    if width == 0:
        return [ALL_UIDS]
    bounds = [f"{i:0{width}x}" for i in range(1, 16**width)]
    return list(zip(["", *bounds], [*bounds, LAST_UID], strict=True))
