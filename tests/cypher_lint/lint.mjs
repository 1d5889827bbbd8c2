// Lint Cypher files with Neo4j's own parser and semantic analysis.
// Usage: node lint.mjs FILE...   Prints {"<file>": [diagnostic, ...]} as JSON on stdout and
// exits 1 when any diagnostic is an error, 2 on bad usage.
import { readFileSync } from 'node:fs';
import { lintCypherQuery } from '@neo4j-cypher/language-support';
import { dbSchema, llamaIndexSchema } from './dbschema.mjs';

const schema = process.env.CYPHER_LINT_SCHEMA === 'llama_index' ? llamaIndexSchema : dbSchema;

const SEVERITY = { 1: 'error', 2: 'warning', 3: 'information', 4: 'hint' };

function lintFile(path) {
  const { diagnostics } = lintCypherQuery(readFileSync(path, 'utf8'), schema);
  return diagnostics.map((d) => ({
    severity: SEVERITY[d.severity] ?? String(d.severity),
    line: d.range.start.line + 1,
    column: d.range.start.character + 1,
    message: d.message,
  }));
}

const files = process.argv.slice(2);
if (files.length === 0) {
  process.stderr.write('usage: node lint.mjs FILE...\n');
  process.exit(2);
}
const report = Object.fromEntries(files.map((f) => [f, lintFile(f)]));
process.stdout.write(JSON.stringify(report, null, 2) + '\n');
const failed = Object.values(report).some((ds) => ds.some((d) => d.severity === 'error'));
process.exit(failed ? 1 : 0);
