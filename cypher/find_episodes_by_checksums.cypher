// The user's episodes under these message checksums, with their times (an import writes an
// exported message onto the one the user already holds).
UNWIND $checksums AS c
MATCH (p:Episode {user_id: $user_id, checksum: c})
RETURN c AS checksum, p.uid AS uid, p.ts AS ts
