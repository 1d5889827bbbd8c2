CREATE VECTOR INDEX episode_embedding IF NOT EXISTS
FOR (p:Episode) ON (p.embedding)
OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine'}}
