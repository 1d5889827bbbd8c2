// Users with entities written before entities carried their user's key (a store made by an
// older graphmem): `setup` gives them the key.
MATCH (e:Entity)
WHERE e.user_key IS NULL
RETURN DISTINCT e.user_id AS user_id
