CREATE INDEX FOR (p:Episode) ON (p.uid, p.user_id, p.ts, p.checksum)
