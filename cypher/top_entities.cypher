// Most salient entities: frequency weighted by exponential recency decay ($half_life seconds).
MATCH (e:Entity {user_id: $user_id})
WITH e, CASE $by
          WHEN 'frequency' THEN toFloat(e.mentions)
          WHEN 'recency' THEN toFloat(e.last_seen)
          ELSE e.mentions * exp(-0.6931471805599453 * ($now - e.last_seen) / $half_life)
        END AS score
RETURN e {.uid, .user_id, .key, .name, .type, .aliases, .mentions, .first_seen, .last_seen} AS entity,
       score
ORDER BY score DESC, e.mentions DESC, e.key
LIMIT $k
