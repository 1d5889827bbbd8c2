CALL db.idx.fulltext.createNodeIndex('Entity', 'name', 'aliases_text')
