CREATE VECTOR INDEX FOR (f:Fact) ON (f.embedding)
OPTIONS {dimension: $dimension, similarityFunction: 'cosine', efConstruction: $ef_construction}
