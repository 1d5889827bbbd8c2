// The text of the user's episode under each of these message checksums it holds (idempotent
// ingest; a message an export keys by its own id is compared with the text it arrives with).
UNWIND $checksums AS c
MATCH (p:Episode {user_id: $user_id, checksum: c})
RETURN c AS checksum, head(collect(p.content)) AS content
