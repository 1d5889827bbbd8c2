// Which of these message checksums a user's memory holds as failed episodes: messages whose
// extraction failed, which an ingest extracts again.
UNWIND $checksums AS c
MATCH (p:Episode {user_id: $user_id, checksum: c})
WHERE p.status = 'failed'
RETURN DISTINCT c AS checksum
