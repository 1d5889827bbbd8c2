"""How message uids are ordered and split into ranges, for reading a large user in parts."""

from __future__ import annotations

# every uid is in ["", LAST_UID): graphmem writes uids as hex digests, and every ASCII string
# sorts before DEL (an index of FalkorDB's compares non-ASCII bounds unlike its queries do)
LAST_UID = "\x7f"
ALL_UIDS = ("", LAST_UID)


def uid_ranges(count: int, page: int) -> list[tuple[str, str]]:
    """Ranges of uids, one per hex prefix of one length, that together hold every hex uid,
    for reading `count` records about `page` at a time (a uid is a hex digest, so the ranges
    hold about as many each). Each range is [prefix, prefix + DEL): FalkorDB's index compares
    a string range on a prefix of the stored values as long as the lower bound and one more
    character, so ("", "01") returned every uid starting "0" and ("00f", "010") ten times its
    share. A reader checks the count read against the count stored."""
    width = 0
    while count > page * 16**width and width < 4:
        width += 1
    if width == 0:
        return [ALL_UIDS]
    return [(prefix, prefix + LAST_UID) for prefix in (f"{i:0{width}x}" for i in range(16**width))]
