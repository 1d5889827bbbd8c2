"""What an export reader kept and left out of one export, told in one warning at its end.

The export readers (ChatGPT, Claude, Slack) leave out what is no message of a person (system
and tool messages, joins, bots, deleted ones) and the parts of a kept message that are no text
(tool calls, reasoning, attachments). Rather than a warning each, they count them by reason
and say so once: `7 messages read from 2 conversations; left out 9: 3 system, 6 empty`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass(slots=True)
class Tally:
    """Messages kept, messages left out by reason, parts left out of kept messages by kind,
    and how many `groups` (conversations, channels) they came from."""

    unit: str  # what a group is called, plural: "conversations", "channels"
    groups: int = 0
    kept: int = 0
    left_out: Counter[str] = field(default_factory=Counter)
    parts: Counter[str] = field(default_factory=Counter)

    def summary(self) -> str | None:
        """The warning's text; None when nothing was left out."""
        if not self.left_out and not self.parts:
            return None
        messages = "1 message" if self.kept == 1 else f"{self.kept} messages"
        unit = self.unit.removesuffix("s") if self.groups == 1 else self.unit
        said = f"{messages} read from {self.groups} {unit}"
        if self.left_out:
            total = sum(self.left_out.values())
            said += f"; left out {total}: {_counted(self.left_out)}"
        if self.parts:
            said += f"; left out of the messages read: {_counted(self.parts)}"
        return said


def _counted(reasons: Counter[str]) -> str:
    return ", ".join(f"{n} {why}" for why, n in reasons.most_common())
