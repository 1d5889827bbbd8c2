CREATE VECTOR INDEX FOR (p:Episode) ON (p.embedding)
OPTIONS {dimension: $dimension, similarityFunction: 'cosine', efConstruction: $ef_construction}
