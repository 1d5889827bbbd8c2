// Which of these message checksums a user's memory already holds (idempotent ingest).
UNWIND $checksums AS c
MATCH (p:Episode {user_id: $user_id, checksum: c})
RETURN DISTINCT c AS checksum
