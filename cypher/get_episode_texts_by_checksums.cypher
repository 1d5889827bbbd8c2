// Which of these message checksums the user's memory holds (idempotent ingest), with the
// episode's text for those of $texts only: a message an export keys by its own id is compared
// with the text it arrives with; any other message needs no text.
UNWIND $checksums AS c
MATCH (p:Episode {user_id: $user_id, checksum: c})
WITH c, collect(p.content)[0] AS content
RETURN c AS checksum, CASE WHEN c IN $texts THEN content END AS content
