CREATE INDEX entity_uid IF NOT EXISTS FOR (e:Entity) ON (e.uid)
