// Per-user scans (alias lookups, top entities, counts) without reading other users' entities.
CREATE INDEX entity_user IF NOT EXISTS FOR (e:Entity) ON (e.user_id)
