// Most salient entities: engine.knowledge.salience, the mean of log-frequency (against the
// user's most mentioned entity) and recency halving every $half_life seconds. With $since /
// $until (epoch seconds, or null): the entities written in that window (last seen at or
// after $since, first seen at or before $until).
MATCH (top:Entity {user_id: $user_id})
WITH max(top.mentions) AS most
MATCH (e:Entity {user_id: $user_id})
WHERE ($since IS NULL OR e.last_seen >= $since) AND ($until IS NULL OR e.first_seen <= $until)
WITH e, most, CASE WHEN $now > e.last_seen THEN $now - e.last_seen ELSE 0.0 END AS age
WITH e, CASE $by
          WHEN 'frequency' THEN toFloat(e.mentions)
          WHEN 'recency' THEN toFloat(e.last_seen)
          ELSE (log(1.0 + e.mentions) / log(1.0 + CASE WHEN most > 1 THEN most ELSE 1 END)
                + exp(-0.6931471805599453 * age / $half_life)) / 2.0
        END AS score
RETURN e {.uid, .user_id, .key, .name, .type, .aliases, .mentions, .first_seen, .last_seen} AS entity,
       score
ORDER BY score DESC, e.mentions DESC, e.key
LIMIT $k
