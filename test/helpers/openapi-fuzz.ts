// Schema-driven fuzzing of an app through its served OpenAPI document (issue 29): for every operation,
// requests whose path parameters, query values or JSON body (one field at a time) are poisoned with what
// breaks servers: NUL, invalid UTF-8 escapes, lone surrogates, 100 KB strings, numbers beyond every
// column type, wrong types, 10,000-deep nesting, extra fields. fast-check picks the poisons per operation
// from a fixed seed, so every run sends the same requests and a failure can be replayed.
import fc from 'fast-check';
import { expect } from 'vitest';
import { baselineValue, bodyFields, deref, type Doc, type Schema } from './openapi-schema.js';

export type { Doc } from './openapi-schema.js';

export interface Operation {
  method: string;
  /** The OpenAPI path template, e.g. `/api/v1/agents/{id}`. */
  path: string;
  access: string | undefined;
  spec: Schema;
}

export interface FuzzRequest {
  operation: Operation;
  method: string;
  url: string;
  payload?: string | Buffer;
  /** Whether the caller's credentials go with it (false: the same request without any). */
  authenticated: boolean;
  label: string;
}

export interface FuzzOptions {
  seed: number;
  /** A valid value for a path or query parameter (ids of seeded resources); undefined: derived from the schema. */
  known(name: string, operation: Operation): string | undefined;
}

const MARK = 'POISON_c0ffee';
const big = 'x'.repeat(100_000);
const DEEP_ARRAY = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
const DEEP_OBJECT = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
const INVALID_UTF8 = Buffer.from([0x22, 0x61, 0xff, 0xfe, 0xc0, 0x80, 0xed, 0xa0, 0x80, 0x22]);

const STRINGS = ['\u0000', 'a\u0000b', '\ud800', 'x\udfff', big, '', ' ', '\u202e\u0007', "' OR 1=1 --", '%00', '../../../etc/passwd'];
const NUMBERS = ['2147483648', '-2147483649', '9007199254740993', '123456789012345678901234567890', '-1', '0', '0.5', '1e308', '1e400', '-1e400', '1e-400', '-0', 'NaN'];
const WRONG: Record<string, string[]> = {
  string: ['12', 'true', 'null', '{}', '[]'],
  integer: ['"12"', '"abc"', 'true', 'null', '[]', '{}'],
  number: ['"12"', 'true', 'null', '[]'],
  boolean: ['"true"', '1', 'null'],
  object: ['[]', '"x"', '1', 'null', '[{}]'],
  array: ['{}', '"x"', '[null]', '[[[[]]]]', `[${'1,'.repeat(50_000)}1]`],
};
const PATH_POISONS = ['%00', 'a%00b', '%FF', '%E0%80', '%ED%A0%80', '2147483648', '9007199254740993', '-1', '0', '1.5', '1e400', 'NaN', 'x'.repeat(300), '%2F..%2F', '%20'];
const QUERY_POISONS = ['%00', 'a%00b', '%FF', '%E0%80', '%ED%A0%80', '%C0%AF', '2147483648', '99999999999999999999999', '-1', '0', '1.5', '1e400', 'NaN', 'Infinity', big, ''];

interface Poison {
  label: string;
  raw: string | Buffer;
}

const json = (label: string, raw: string): Poison => ({ label, raw });

function poisonsFor(schema: Schema, seed: number): Poison[] {
  const type = typeof schema.type === 'string' ? schema.type : 'string';
  const random = fc.sample(fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }), { seed, numRuns: 2 });
  const texts = [...STRINGS, ...random].map((s) => json(`string ${JSON.stringify(s.slice(0, 12))}${s.length > 12 ? `…(${s.length})` : ''}`, JSON.stringify(s)));
  const list: Poison[] = [
    ...texts,
    ...NUMBERS.map((n) => json(`number ${n.slice(0, 20)}`, n)),
    ...(WRONG[type] ?? WRONG.string!).map((w) => json(`wrong type ${w.slice(0, 12)}`, w)),
    json('10,000-deep array', DEEP_ARRAY),
    json('10,000-deep object', DEEP_OBJECT),
    { label: 'invalid UTF-8 bytes', raw: INVALID_UTF8 },
  ];
  // Strings get every string poison; other types mostly their own kind, and a few of the rest.
  return type === 'string' ? list : [...list.filter((p) => !p.label.startsWith('string')), ...texts.slice(0, 4)];
}

function withPoison(baseline: unknown, path: string[], poison: Poison, asItem = false): string | Buffer {
  const body = structuredClone(baseline ?? {}) as Record<string, unknown>;
  let node: Record<string, unknown> = body;
  for (const key of path.slice(0, -1)) {
    if (typeof node[key] !== 'object' || node[key] === null) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1]!] = MARK;
  const [head, tail] = JSON.stringify(body).split(`"${MARK}"`) as [string, string];
  const [before, after] = asItem ? [`${head}[`, `]${tail}`] : [head, tail];
  return typeof poison.raw === 'string' ? before + poison.raw + after : Buffer.concat([Buffer.from(before), poison.raw, Buffer.from(after)]);
}

/** Every operation in the document, WebSockets included (they are plain GETs there). */
export function operationsOf(doc: Doc): Operation[] {
  return Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, spec]) => ({ method: method.toUpperCase(), path, access: spec['x-access'] as string | undefined, spec: spec as Schema })),
  );
}

function parametersOf(doc: Doc, op: Operation, where: 'path' | 'query'): Array<{ name: string; schema: Schema; required: boolean }> {
  const params = (op.spec.parameters ?? []) as Schema[];
  return params.filter((p) => p.in === where).map((p) => ({ name: p.name as string, schema: deref(doc, p.schema ?? {}), required: p.required === true }));
}

/** The requests for one operation: seeded, bounded, one thing poisoned in each. */
export function fuzzRequests(doc: Doc, op: Operation, options: FuzzOptions): FuzzRequest[] {
  const seed = options.seed ^ hash(`${op.method} ${op.path}`);
  const valid = (name: string, schema: Schema) => options.known(name, op) ?? String(baselineValue(doc, schema, seed));
  const pathParams = parametersOf(doc, op, 'path');
  const queryParams = parametersOf(doc, op, 'query');
  const validPath = Object.fromEntries(pathParams.map((p) => [p.name, encodeURIComponent(valid(p.name, p.schema))]));
  const validQuery = queryParams.filter((p) => p.required).map((p) => [p.name, encodeURIComponent(valid(p.name, p.schema))] as const);
  const urlWith = (path: Record<string, string>, query: ReadonlyArray<readonly [string, string]>) => {
    const filled = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => path[name] ?? 'x');
    return query.length ? `${filled}?${query.map(([k, v]) => `${k}=${v}`).join('&')}` : filled;
  };
  const bodySchema = op.spec.requestBody?.content?.['application/json']?.schema as Schema | undefined;
  const bodyBase = bodySchema ? baselineValue(doc, bodySchema, seed, (name) => options.known(name, op)) : undefined;
  const validBody = bodySchema ? JSON.stringify(bodyBase) : undefined;
  const request = (label: string, parts: { path?: Record<string, string>; query?: ReadonlyArray<readonly [string, string]>; payload?: string | Buffer }, authenticated = true): FuzzRequest => ({
    operation: op,
    method: op.method,
    url: urlWith(parts.path ?? validPath, parts.query ?? validQuery),
    payload: parts.payload ?? validBody,
    authenticated,
    label,
  });

  const pick = <T>(list: T[], count: number, salt: number): T[] =>
    list.length <= count ? list : fc.sample(fc.shuffledSubarray(list, { minLength: count, maxLength: count }), { seed: seed ^ salt, numRuns: 1 })[0]!;

  const out: FuzzRequest[] = [request('valid, no credentials', {}, false), request('valid', {})];
  const randomSegment = fc.sample(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }), { seed, numRuns: 1 }).map(encodeURIComponent);
  // Each parameter and field always gets the poisons most likely to reach the database (NUL, a number
  // beyond every integer column); fast-check adds a seeded choice of the others.
  for (const p of pathParams) {
    const chosen = [...PATH_POISONS.slice(0, 4), 'x'.repeat(300), ...pick([...PATH_POISONS.slice(4), ...randomSegment], 3, 1)];
    for (const poison of chosen) out.push(request(`path ${p.name}=${poison.slice(0, 20)}`, { path: { ...validPath, [p.name]: poison } }));
  }
  const queryCandidates = queryParams.flatMap((p) => QUERY_POISONS.slice(2).map((v) => ({ name: p.name, value: v })));
  const queryCore = queryParams.flatMap((p) => QUERY_POISONS.slice(0, 2).map((v) => ({ name: p.name, value: v })));
  for (const q of [...queryCore, ...pick(queryCandidates, 8, 2)]) {
    const rest = validQuery.filter(([k]) => k !== q.name);
    out.push(request(`query ${q.name}=${q.value.slice(0, 20)}`, { query: [...rest, [q.name, q.value]] }));
  }
  if (queryParams[0]) out.push(request(`query ${queryParams[0].name} twice`, { query: [...validQuery, [queryParams[0].name, 'a'], [queryParams[0].name, '%00']] }));
  out.push(request('undeclared query value with NUL', { query: [...validQuery, ['zz_extra', '%00']] }));

  if (bodySchema) {
    const fields = bodyFields(doc, bodySchema);
    const core = fields.filter((f) => !f.asItem).map((f) => ({ f, poison: f.schema.type === 'integer' || f.schema.type === 'number' ? json('number 2147483648', '2147483648') : json('string NUL', '"a\\u0000b"') }));
    const candidates = fields.flatMap((f, i) => pick(poisonsFor(f.schema, seed + i), 6, 3 + i).map((poison) => ({ f, poison })));
    for (const { f, poison } of [...core, ...pick(candidates, 14, 4)]) {
      out.push(request(`body ${f.path.join('.')}${f.asItem ? '[0]' : ''} = ${poison.label}`, { payload: withPoison(bodyBase, f.path, poison, f.asItem) }));
    }
    const whole: Poison[] = [json('body 10,000-deep array', DEEP_ARRAY), json('body 10,000-deep object', DEEP_OBJECT), json('body []', '[]'), json('body "x"', '"x"'), json('body null', 'null'), json('body truncated', '{"a":')];
    for (const poison of whole) out.push(request(poison.label, { payload: poison.raw }));
    out.push(request('body with a NUL key', { payload: withPoison(bodyBase, ['a\u0000b'], json('', '1')) }));
    out.push(request('body with an extra field', { payload: withPoison(bodyBase, ['zz_extra'], json('', JSON.stringify(big))) }));
  }
  return out;
}

export interface Response {
  statusCode: number;
  body: string;
  headers: Record<string, unknown>;
}

/** What a client must never see: a stack frame, a source path, SQL or a database message. */
const LEAKS = /\n\s+at\s|\bat \S+ \(|node_modules|\/work\/|\bsrc\/\S+\.[jt]s|\.[cm]?[jt]s:\d+|syntax error|violates|duplicate key|out of range for|invalid input syntax|relation "|unsupported Unicode/i;

/** The problems with one answer; `plainText200` for endpoints that answer 200 text whatever they get. */
export function problemsWith(res: Response, plainText200 = false): string[] {
  const problems: string[] = [];
  if (res.statusCode >= 500) problems.push(`status ${res.statusCode}`);
  if (typeof res.headers['x-request-id'] !== 'string') problems.push('no x-request-id header');
  if (plainText200) {
    if (res.statusCode !== 200 || !String(res.headers['content-type']).startsWith('text/plain')) problems.push(`not a 200 text answer: ${res.statusCode}`);
  } else if (res.statusCode >= 400) {
    let body: Record<string, unknown> | undefined;
    try {
      body = JSON.parse(res.body) as Record<string, unknown>;
    } catch {
      problems.push('error body is not JSON');
    }
    if (body && (typeof body.error !== 'string' || typeof body.code !== 'string' || !/^[A-Z][A-Z0-9_]*$/.test(body.code) || typeof body.request_id !== 'string' || body.request_id !== res.headers['x-request-id'])) {
      problems.push(`not the contract's error body: ${res.body.slice(0, 160)}`);
    }
  }
  if (res.statusCode >= 400 && LEAKS.test(res.body)) problems.push(`internals in the body: ${res.body.slice(0, 160)}`);
  return problems;
}

export interface FuzzRun {
  doc: Doc;
  operations: Operation[];
  /** `METHOD /path` of every operation fuzzed. */
  sent: Set<string>;
  /** Requests sent. */
  count: number;
  problems: string[];
}

/** The part of a Fastify app the fuzz drives. */
interface Injectable {
  inject(request: { method: 'GET'; url: string; headers?: Record<string, string>; payload?: string | Buffer }): Promise<Response>;
}

/**
 * Sends every operation of the app's document its poisoned requests, deletions last (so the others find
 * the seeded resources), and collects what was wrong with the answers.
 */
export async function fuzzEveryOperation(
  app: Injectable,
  docUrl: string,
  options: FuzzOptions & {
    /** Credentials for a request that carries them. */
    credentials(request: FuzzRequest): Record<string, string>;
    /** Operations answering 200 text whatever they get. */
    plainText200?(operation: Operation): boolean;
    /** After each operation (e.g. signing in again when it ended the session). */
    afterOperation?(): Promise<void>;
  },
): Promise<FuzzRun> {
  const doc = JSON.parse((await app.inject({ method: 'GET', url: docUrl })).body) as Doc;
  const operations = operationsOf(doc).sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
  const run: FuzzRun = { doc, operations, sent: new Set(), count: 0, problems: [] };
  for (const op of operations) {
    for (const req of fuzzRequests(doc, op, options)) {
      const res = await app.inject({
        method: req.method as 'GET',
        url: req.url,
        headers: { ...options.credentials(req), ...(req.payload === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(req.payload === undefined ? {} : { payload: req.payload }),
      });
      run.count++;
      for (const p of problemsWith(res, options.plainText200?.(op))) run.problems.push(`${req.method} ${req.url.slice(0, 100)} [${req.label}]: ${p}`);
    }
    run.sent.add(`${op.method} ${op.path}`);
    await options.afterOperation?.();
  }
  return run;
}

/** Every operation was fuzzed: a route added later cannot escape the test. */
export function expectAllCovered(doc: Doc, sent: ReadonlySet<string>): void {
  const all = operationsOf(doc).map((op) => `${op.method} ${op.path}`);
  expect(all.filter((key) => !sent.has(key))).toEqual([]);
  expect(sent.size).toBe(all.length);
}

function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}
