"""The read side: from a query to ranked facts, messages and paths, with no LLM call.

    query -> `query.Query.parse` (words, content words, fulltext terms; once)          parse
          -> legs start: `graph_leg.GraphLeg.start` (name reads) and the message index,
             while the query is embedded; then the vector reads (entities first,
             `semantic.SemanticLeg.start`, the messages nearest)                         start
          -> graph leg: `anchors` (what the query names) -> the question (relation words,
             phrase, asked kind, chained nouns: `terms`) -> `scorer.PredicateScorer.match`
             (the question's words) -> `RelationMatch.with_ends` (`kinds.RelationEnds`) ->
             `expansion.expand` (the walk, `reach`) -> `paths` (joins)                   graph
          -> `semantic.SemanticLeg.finish`; `episodes.EpisodeLeg.rank` (BM25 + vectors)  finish
          -> `fusion` (confidence, reciprocal-rank fusion, salience, twins) -> time
             window -> `provenance` (facts and their messages ranked together) ->
             `similarity` (cosines, the floor) -> `explain`                              fuse

`retriever.DualRetriever.search` reads as these stages. Every leg has one shape: `start`
submits its reads to `background.BACKGROUND` (the search's `_Started` holds them), `finish`
waits for them and ranks. The numbers: the public
`engine.ranking.RankingParams` and the private `tuning.Tuning`. docs/retrieval.md tells the
algorithm with a worked example.
"""
