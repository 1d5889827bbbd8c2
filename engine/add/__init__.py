"""The write side: from messages (or pre-extracted facts) to one write batch.

    messages -> `messages` (parse, Episode rows, checksums)
             -> `prepare` (what is new, by `keys`, and known; ONE extraction) phase one
             -> `resolve` (names -> entities) + `changes` (facts, invalidations)
             -> `batch.assemble` (the one way to a `WriteBatch`) -> store   phase two

`facts` takes pre-extracted facts through the same `changes.settle` and `batch.assemble`,
resolving names by key alone. `Adder` holds the collaborators (it knows no `Memory`);
`steps.AddSteps` is the ingest pipeline's `Steps` on an `Adder`.
"""
