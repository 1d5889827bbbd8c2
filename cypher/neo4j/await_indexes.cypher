// Block until every index is ONLINE (fails after $timeout_s seconds).
CALL db.awaitIndexes($timeout_s)
