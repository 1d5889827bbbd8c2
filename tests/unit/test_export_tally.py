"""An export's one warning counts what it read in words that agree with the numbers."""

from __future__ import annotations

from collections import Counter

from engine.ingest.tally import Tally


def test_one_message_of_one_conversation_is_said_in_the_singular() -> None:
    one = Tally("conversations", groups=1, kept=1, left_out=Counter(system=1))
    many = Tally("channels", groups=2, kept=5, left_out=Counter(channel_join=1))
    assert one.summary() == "1 message read from 1 conversation; left out 1: 1 system"
    assert many.summary() == "5 messages read from 2 channels; left out 1: 1 channel_join"
