CALL db.idx.fulltext.createNodeIndex('Episode', 'content')
