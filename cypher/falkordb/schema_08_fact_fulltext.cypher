CALL db.idx.fulltext.createNodeIndex('Fact', 'text')
