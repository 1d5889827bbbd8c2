UNWIND $uids AS id
MATCH (p:Episode {uid: id})
WHERE p.user_id = $user_id
RETURN p {.uid, .user_id, .session_id, .role, .speaker, .content, .ts, .source, .checksum, .status, .error,
          .metadata, .undated} AS episode
