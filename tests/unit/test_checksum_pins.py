"""The checksums messages are stored under, pinned: a store keeps them, so a change here would
add every message a user ingests or adds again. Only the export readers (ChatGPT, Claude,
Slack) key a message by the export's own id; every other input keeps these exact values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.add.keys import message_keys
from engine.add.messages import (
    checksum,
    episode_rows,
    parse_message,
    record_checksums,
    speaker_checksum,
)
from engine.ingest import read_chat_log

TEXT = "I adopted a dog."
MARCH_1 = 1709287200.0  # 2024-03-01T10:00:00Z
LOCOMO_TURN = {"speaker": "Ann", "dia_id": "D1:1", "text": TEXT}
LOCOMO = {
    "speaker_a": "Ann", "speaker_b": "Bob", "session_1": [LOCOMO_TURN],
    "session_1_date_time": "1:56 pm on 8 May, 2023",
}  # fmt: skip
FILES = {
    "chat.jsonl": json.dumps({"role": "user", "content": TEXT, "timestamp": "2024-03-01T10:00:00Z"})
    + "\n"
    + json.dumps({"role": "assistant", "content": "Nice!"})
    + "\n",
    "chat.csv": "role,content,timestamp\nuser,I moved to Paris.,2024-03-02T09:30:00Z\n",
    "chat.json": json.dumps(
        [{"id": "c1", "conversations": [{"from": "human", "value": "My sister is Ann."}]}]
    ),
    "locomo.json": json.dumps([{"sample_id": "x", "qa": [], "conversation": LOCOMO}]),
}
PINNED = {
    "chat.jsonl:1": (
        "821b8c2310d2d19a674c0bb111efa6bf64e0b4b9af10cda1f6b0b74a7a86f71d",
        "a3aae58d7d99318e1422f37a5c968cd5a42bf001a45e4fb7e95b83a740e891d1",
    ),
    "chat.jsonl:2": ("ce770225ae69a850232b5369dfc95e23dc1fcfd075b4da9d1131cb8550a7994e",),
    "chat.csv:2": (
        "6d193423413da7b4842aaff6588f625d27daba795bbfcf75e68bc61fe5f808f5",
        "4e4a6ac23350b1fc526241090c349911f5de66553136d84e6966971fec64f72b",
    ),
    "chat.json:1#1": ("812c8ff4240147613d70d1c04039f4241ba2135671a511812f22e61cec462743",),
    "D1:1": ("45186e87b3794eca4443804550957e65d613b741bc7c4c13d6b0bfa840ccb91b",),
}


@pytest.mark.parametrize("name", sorted(FILES))
def test_file_formats_keep_their_checksums(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text(FILES[name], encoding="utf-8")
    records = read_chat_log(path, user_id="u").records
    assert not any(r.exported_id for r in records)
    found = {r.source: record_checksums(r, "u", 1000) for r in records}
    assert found == {source: PINNED[source] for source in found}
    assert found


def test_memory_add_keeps_its_checksums() -> None:
    message = parse_message({"role": "user", "content": TEXT}, 1000)
    [dated] = episode_rows("u", [message], "s", MARCH_1, None, None)
    [placed] = episode_rows("u", [message], "s", MARCH_1, "app", None)
    assert dated.checksum == "7721f7e4c4ca753a73cce344b3c78e71102e21bf4f5ef318005c3d71fa6dc222"
    assert placed.checksum == "599c0663542aae9544e2b1ab0ad0d11660f45be34dbc2c4740350e4674675801"
    undated = checksum("u", None, "user", TEXT, None, None)
    assert undated == "cf162bcc114409ee3b12fdcb947287afff0a7b58cb47119465c919d8ff325f61"


def test_the_same_words_said_again_in_one_call_are_another_message() -> None:
    """Two speakers of a group chat say the same, or a user says "Yes" twice: each is a
    message of its own, the first keeping its pinned checksum, and the same call added
    again gives the same ones (skipped then)."""
    said = [
        parse_message({"role": "user", "name": "Maria", "content": TEXT}, 1000),
        parse_message({"role": "user", "name": "John", "content": TEXT}, 1000),
        parse_message({"role": "user", "content": TEXT}, 1000),
    ]
    rows = episode_rows("u", said, "s", MARCH_1, None, None)
    assert rows[0].checksum == "7721f7e4c4ca753a73cce344b3c78e71102e21bf4f5ef318005c3d71fa6dc222"
    assert len({r.checksum for r in rows}) == 3 and len({r.uid for r in rows}) == 3
    again = episode_rows("u", said, "s", MARCH_1, None, None)
    assert [r.checksum for r in again] == [r.checksum for r in rows]


def test_a_speaker_saying_words_another_speaker_said_keeps_its_checksum() -> None:
    """The key of a message whose words' checksum holds another message (`engine.add.keys`):
    its words' checksum, its speaker's key ("Ana" and "ANA" say the same: `speaker_key`) and
    the how-manieth time that speaker says them."""
    words = checksum("u", "s", "user", TEXT, MARCH_1, None)
    said = {"role": "user", "name": "ANA", "content": TEXT}
    [key] = message_keys("u", episode_rows("u", [parse_message(said, 1000)], "s", MARCH_1,
                                           None, None), MARCH_1)  # fmt: skip
    ana = speaker_checksum(words, "ana", 1)
    assert ana == key.own.checksum
    assert ana == "32e1a4b3b62677958edb1bbacf120df0a72beb7efa322654bfda7c3edb78ced1"
    again = speaker_checksum(words, None, 2)
    assert again == "7a78e6a47ac3b9d75e28f924e5af1401ea1b7270fae6d685a4fff022a0414c9e"
