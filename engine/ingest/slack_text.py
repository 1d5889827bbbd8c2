"""Slack's message markup made readable: mentions by name, links with their label.

Slack writes `<@U123>` for a mention, `<#C1|general>` for a channel, `<!here>` for a
broadcast, `<https://x|label>` for a link, and escapes `&`, `<` and `>` as `&amp;`, `&lt;`,
`&gt;` (so a `<` left in the text is always markup).

>>> names = Names(users={"U1": "Ann Lee"}, channels={"C1": "general"})
>>> readable("<@U1> see <#C1> &amp; <https://x.org/a|the notes> &lt;3 <!here>", names)
'@Ann Lee see #general & the notes (https://x.org/a) <3 @here'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_MARKUP = re.compile(r"<([^<>\n]*)>")
_SCHEMES = ("mailto:", "tel:", "https://", "http://")


@dataclass(frozen=True, slots=True)
class Names:
    """Who and what an export's ids name: user id -> name, channel id -> channel name."""

    users: dict[str, str] = field(default_factory=dict)
    channels: dict[str, str] = field(default_factory=dict)


def readable(text: str, names: Names) -> str:
    """`text` with its markup written out and `&amp;`, `&lt;`, `&gt;` unescaped."""
    shown = _MARKUP.sub(lambda match: _shown(match[1], names), text)
    return shown.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _shown(inner: str, names: Names) -> str:
    target, _, label = inner.partition("|")
    if target.startswith("@"):  # a user: the name users.json gives, not the label
        user = target[1:]
        return "@" + (names.users.get(user) or label or user)
    if target.startswith("#"):  # a channel: the label is its name when written
        channel = target[1:]
        return "#" + (label or names.channels.get(channel) or channel)
    if target.startswith("!"):  # <!here>, <!subteam^S1|@design>, <!date^...|fallback>
        return label or "@" + target[1:].partition("^")[0]
    if label and _bare(label) == _bare(target):  # <mailto:a@x.org|a@x.org>, <https://x|x>
        return label if target.startswith(_SCHEMES[:2]) else target
    return f"{label} ({target})" if label else target


def _bare(link: str) -> str:
    return next((link[len(s) :] for s in _SCHEMES if link.startswith(s)), link)
