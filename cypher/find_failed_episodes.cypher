// The user's episodes kept as failed under these message checksums (added again: retried).
UNWIND $checksums AS c
MATCH (p:Episode {user_id: $user_id, checksum: c})
WHERE p.status = 'failed'
RETURN c AS checksum, p.uid AS uid
