"""What a test left behind that it should not have: reported in the warnings summary (not as
an error: see `ServerLeftWarning`)."""


class ServerLeftWarning(UserWarning):
    """A test left an embedded FalkorDB server running; the suite stopped it. Shown, not
    raised: seen once in a full run and never since, it is a clue to a rare race, and a
    suite that failed on it would fail at random."""
