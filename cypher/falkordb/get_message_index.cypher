// The parts of the user's stored message index (the episode leg's BM25 postings and message
// columns, no message text): each one's number and the format it was written in (its data is
// read part by part, `get_message_index_part`); and what they are checked against: how many
// messages the user has, and their uids joined by newlines (one string reads faster than a
// list here; a uid holds no control character). A node without a part number is an index
// stored whole by an earlier version: not read.
MATCH (p:Episode {user_id: $user_id})
WITH count(p) AS messages, string.join(collect(p.uid), '\n') AS uids
OPTIONAL MATCH (m:MessageIndex {user_id: $user_id})
WHERE m.part IS NOT NULL
RETURN messages, uids, collect(CASE WHEN m IS NULL THEN null ELSE [m.part, m.format] END) AS parts
