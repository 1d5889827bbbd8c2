// The user's stored message index (the episode leg's BM25 postings and message columns, no
// message text) with the format it was written in, null when none is stored; and what it is
// checked against: how many messages the user has, and their uids joined by newlines (one
// string reads faster than a list here; a uid holds no control character).
MATCH (p:Episode {user_id: $user_id})
WITH count(p) AS messages, string.join(collect(p.uid), '\n') AS uids
OPTIONAL MATCH (m:MessageIndex {user_id: $user_id})
RETURN m.format AS format, m.data AS data, messages, uids
