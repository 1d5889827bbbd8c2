// The dimension each declared vector index was built with.
CALL db.indexes() YIELD label, types, options
WHERE 'VECTOR' IN types.embedding
RETURN label, options.embedding.dimension AS dimension
