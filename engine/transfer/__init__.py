"""Moving one user's graph: `export` (JSON, Cypher, GraphML), `restore` (import a JSON
export, within `import_limits`), `snapshot` (the versioned export document), `cypher_literal`
(escaped Cypher literals for scripts) and `browse` (a Neo4j Browser hint)."""
