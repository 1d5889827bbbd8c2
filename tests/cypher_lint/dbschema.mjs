// The database graphmem expects, as @neo4j-cypher/language-support's DbSchema: every label,
// relationship type, property key, parameter, function and procedure our Cypher may use.
// Anything else is reported, so a typo fails the lint instead of a query on a live server.

const arg = (name, type, extra = {}) => ({ name, type, description: name, isDeprecated: false, ...extra });

function fn(name, args, returns, { aggregating = false, category = 'Scalar' } = {}) {
  const params = args.map((a) => `${a.name} :: ${a.type}`).join(', ');
  return {
    name,
    category,
    description: name,
    isBuiltIn: true,
    argumentDescription: args,
    returnDescription: returns,
    signature: `${name}(${params}) :: ${returns}`,
    aggregating,
    isDeprecated: false,
  };
}

function proc(name, mode, args, yields) {
  const params = args.map((a) => `${a.name} :: ${a.type}`).join(', ');
  const out = yields.map((y) => `${y.name} :: ${y.type}`).join(', ');
  return {
    name,
    description: name,
    mode,
    worksOnSystem: false,
    argumentDescription: args,
    returnDescription: yields,
    signature: `${name}(${params})${yields.length ? ` :: (${out})` : ''}`,
    admin: false,
    option: { deprecated: false },
  };
}

const ANY = 'ANY';
const functions = [
  fn('coalesce', [arg('input', ANY)], ANY),
  fn('collect', [arg('input', ANY)], 'LIST<ANY>', { aggregating: true, category: 'Aggregating' }),
  fn('count', [arg('input', ANY)], 'INTEGER', { aggregating: true, category: 'Aggregating' }),
  fn('sum', [arg('input', ANY)], ANY, { aggregating: true, category: 'Aggregating' }),
  fn('datetime', [arg('input', ANY, { default: 'DEFAULT_TEMPORAL_ARGUMENT' })], 'ZONED DATETIME'),
  fn('exp', [arg('input', 'FLOAT')], 'FLOAT'),
  fn('floor', [arg('input', 'FLOAT')], 'FLOAT'),
  fn('head', [arg('list', 'LIST<ANY>')], ANY),
  fn('keys', [arg('input', 'MAP')], 'LIST<STRING>'),
  fn('log', [arg('input', 'FLOAT')], 'FLOAT'),
  fn('max', [arg('input', ANY)], ANY, { aggregating: true, category: 'Aggregating' }),
  fn('min', [arg('input', ANY)], ANY, { aggregating: true, category: 'Aggregating' }),
  fn('labels', [arg('input', 'NODE')], 'LIST<STRING>'),
  fn('size', [arg('input', ANY)], 'INTEGER'),
  fn('round', [arg('value', 'FLOAT'), arg('precision', 'INTEGER | FLOAT')], 'FLOAT'),
  fn('replace', [arg('original', 'STRING'), arg('search', 'STRING'), arg('replace', 'STRING')], 'STRING'),
  fn('range', [arg('start', 'INTEGER'), arg('end', 'INTEGER')], 'LIST<INTEGER>'),
  fn('relationships', [arg('input', 'PATH')], 'LIST<RELATIONSHIP>'),
  fn('startNode', [arg('input', 'RELATIONSHIP')], 'NODE'),
  fn('timestamp', [], 'INTEGER'),
  fn('toFloat', [arg('input', ANY)], 'FLOAT'),
  fn('toInteger', [arg('input', ANY)], 'INTEGER'),
  fn('toLower', [arg('input', 'STRING')], 'STRING'),
  fn('trim', [arg('input', 'STRING')], 'STRING'),
  fn('type', [arg('input', 'RELATIONSHIP')], 'STRING'),
  fn('vector.similarity.cosine', [arg('a', 'LIST<INTEGER | FLOAT>'), arg('b', 'LIST<INTEGER | FLOAT>')], 'FLOAT'),
];

const procedures = [
  proc('db.awaitIndexes', 'READ', [arg('timeOutSeconds', 'INTEGER', { default: 'DefaultParameterValue{value=300, type=INTEGER}' })], []),
  proc('db.create.setNodeVectorProperty', 'WRITE',
    [arg('node', 'NODE'), arg('key', 'STRING'), arg('vector', ANY)], []),
  proc('db.index.fulltext.queryNodes', 'READ',
    [arg('indexName', 'STRING'), arg('queryString', 'STRING'),
      arg('options', 'MAP', { default: 'DefaultParameterValue{value={}, type=MAP}' })],
    [arg('node', 'NODE'), arg('score', 'FLOAT')]),
  proc('db.index.vector.queryNodes', 'READ',
    [arg('indexName', 'STRING'), arg('numberOfNearestNeighbours', 'INTEGER'), arg('query', ANY)],
    [arg('node', 'NODE'), arg('score', 'FLOAT')]),
];

const byName = (items) => Object.fromEntries(items.map((item) => [item.name, item]));

// Representative values: the semantic analysis only needs each parameter's type.
const row = { uid: 'u', key: 'k', name: 'n', type: 't', ts: 0.0, mentions: 1, embedding: [0.0] };
const parameters = {
  after: '', lo: '', hi: 'f', at: 0.0, batch: 1000, by: 'salience', cap: 5001,
  change_events: ['ADD'], checksums: ['c'], data: 'd', format: 1, graphmem_labels: ['Entity'],
  model: 'm',
  dimension: 384, dropped: ['-'], ef_construction: 200, embedding: [0.0], ends: [['s', 'o']],
  half_life: 1.0,
  half_life_days: 30.0,
  include_invalid: false, k: 10, keys: ['k'], last: true, limit: 10, lookups: [{ id: 'u', key: 'k' }],
  loose: 'k',
  marks_kept: 16, max_mentions: 500, most: 2001,
  name: 'Alice', nodes: ['u'],
  now: 0.0, pairs: [['R', 's', 'o']], part: 0, probe: [0.0], query: 'q', rows: [row], scan: 500, secret: 's',
  since: 0.0, skip: 0, subjects: true, target_uid: 'u', terms_v: 1, texts: ['c'], timeout_s: 300,
  total: 4000,
  uid: 'u', until: 0.0,
  uids: ['u'], unchanged_details: ['said again'], user_id: 'alice', user_key: 'gm0k',
  where: { type: 'person' },
};

const propertyKeys = [
  'alias_keys', 'aliases', 'aliases_text', 'checksum', 'confidence', 'content', 'created_at',
  'creating', // set and cleared within the statement whose MERGE created the node (merge_*, restore_*, create_history)
  'data', 'detail', 'embedding', 'episode_uid', 'episodes', 'error', 'event', 'first_seen',
  'format', 'id', 'invalid_at',
  'key', 'last_seen', 'load_marks', 'mentions', 'metadata', 'model', 'name', 'part', 'predicate', 'probe', 'role', 'secret', 'session_id',
  'source', 'speaker',
  'status', 'target_uid', 'terms', 'terms_v', 'text', 'ts', 'type', 'uid', 'undated', 'updated_at',
  'user_id', 'user_key',
  'valid_at', 'valid_unit',
];
// Fields of the $rows maps that are not also graph properties: the linter cannot tell a map
// read (row.subject_uid) from a property read, so they are declared as keys too.
const rowFields = [
  'alias', 'changed_at', 'entity_uids', 'episode', 'mark', 'marks', 'object_uid', 'old', 'on_create',
  'on_match', 'relationship', 'stored', 'subject_uid',
];

export const dbSchema = {
  defaultLanguage: 'CYPHER 5',
  // __LABEL__ is the placeholder the engine fills with a validated PascalCase entity type;
  // __Entity__ and __Node__ are the labels LlamaIndex's Neo4jPropertyGraphStore matches on.
  labels: ['Entity', 'Episode', 'Fact', 'GraphmemKey', 'History', 'MessageIndex', 'RelationVectors', '__Entity__', '__LABEL__', '__Node__'],
  // __REL_TYPE__ is the placeholder the engine fills with a validated UPPER_SNAKE_CASE type.
  relationshipTypes: ['MENTIONS', 'OBJECT', 'SUBJECT', '__REL_TYPE__'],
  propertyKeys: [...propertyKeys, ...rowFields],
  parameters,
  functions: { 'CYPHER 5': byName(functions) },
  procedures: { 'CYPHER 5': byName(procedures) },
};

// LlamaIndex's Neo4jPropertyGraphStore reading graphmem's graph (tests/integration/test_llama_index_graph.py):
// the functions and parameters of its read statements on top of graphmem's own schema.
export const llamaIndexSchema = {
  ...dbSchema,
  relationshipTypes: [...dbSchema.relationshipTypes, 'OWNS'], // a predicate the test names
  parameters: {
    ...parameters, ids: ['u'], entity_names: ['n'], property_0: 'alice', property_1: 'n',
    param_0: 'alice', param_1: 'n',
  },
  functions: {
    'CYPHER 5': byName([
      ...functions,
      fn('endNode', [arg('input', 'RELATIONSHIP')], 'NODE'),
      fn('vector.similarity.cosine', [arg('a', 'LIST<FLOAT>'), arg('b', 'LIST<FLOAT>')], 'FLOAT'),
    ]),
  },
};
