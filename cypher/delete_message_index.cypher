// Drop the user's stored message index (a message was deleted: its terms go with it).
MATCH (m:MessageIndex {user_id: $user_id})
DELETE m
