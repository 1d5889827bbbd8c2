// One part of the user's stored message index: its format and data.
MATCH (m:MessageIndex {user_id: $user_id, part: $part})
RETURN m.format AS format, m.data AS data
