// An API description that tools can use (issue 34, Build 5 and acceptance 4): every operation has a
// stable operationId (src/http/operations.ts), a description and declared tags; Spectral's `spectral:oas`
// ruleset finds no error and no warning (.spectral.yaml justifies what it turns off); and a client
// generated with openapi-typescript type-checks and works against a live server: it signs in, lists
// agents and runs a command on a reference agent.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../src/http/operations.js';
import { adminToken, bearer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveServer } from './helpers/live-agent.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'node_modules/.bin');
const run = promisify(execFile);

type Operation = { operationId?: string; description?: string; tags?: string[] };
type Doc = { tags?: Array<{ name: string }>; paths: Record<string, Record<string, Operation>> };

let s: LiveServer;
let doc: Doc;
let text: string;
let work: string;

beforeAll(async () => {
  s = await startLiveServer({});
  text = (await s.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).body;
  doc = JSON.parse(text) as Doc;
  // Inside the repository, so the generated client's imports and @types/node resolve.
  await mkdir(path.join(ROOT, 'test-results'), { recursive: true });
  work = await mkdtemp(path.join(ROOT, 'test-results', 'openapi-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
  await s.close();
});

const operations = () =>
  Object.entries(doc.paths).flatMap(([p, methods]) =>
    Object.entries(methods)
      .filter(([m]) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
      .map(([m, op]) => ({ key: `${m.toUpperCase()} ${p}`, op })),
  );

describe('the OpenAPI document for tools', () => {
  it('gives every operation an operationId (the listed one where src/http/operations.ts lists it), unique, a description and declared tags', () => {
    const ops = operations();
    expect(ops.length).toBeGreaterThan(100);
    // A new feature may name its operations in its own route schemas; a listed id never changes.
    expect(ops.filter(({ key, op }) => !op.operationId || (OPERATIONS[key] !== undefined && op.operationId !== OPERATIONS[key][0])).map(({ key }) => key)).toEqual([]);
    // No stale entries: every listed operation exists.
    expect(Object.keys(OPERATIONS).filter((key) => !ops.some((o) => o.key === key))).toEqual([]);
    const ids = ops.map(({ op }) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ops.filter(({ op }) => !op.description?.trim()).map(({ key }) => key)).toEqual([]);
    const declared = new Set((doc.tags ?? []).map((t) => t.name));
    expect([...new Set(ops.flatMap(({ op }) => op.tags ?? []))].filter((tag) => !declared.has(tag))).toEqual([]);
  });

  it("passes Spectral's spectral:oas rules with no error and no warning", async () => {
    const file = path.join(work, 'openapi.json');
    await writeFile(file, text);
    const result = await run(path.join(BIN, 'spectral'), ['lint', '-r', path.join(ROOT, '.spectral.yaml'), file, '--fail-severity=warn', '-f', 'text'], { cwd: ROOT }).then(
      (out) => ({ code: 0, out: out.stdout }),
      (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, out: `${err.stdout}${err.stderr}` }),
    );
    expect(result.code, result.out).toBe(0);
  }, 60_000);

  it('generates TypeScript types that a small client type-checks against and runs with on a live server', async () => {
    await writeFile(path.join(work, 'schema.d.ts'), astToString(await openapiTS(text)));
    const typeErrors = async (name: string, source: string) => {
      await writeFile(path.join(work, `${name}.ts`), source);
      const config = path.join(work, `${name}.tsconfig.json`);
      await writeFile(config, JSON.stringify({ compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', types: ['node'] }, files: [`${name}.ts`] }));
      return run(path.join(BIN, 'tsc'), ['-p', config], { cwd: work }).then(
        () => '',
        (err: { stdout: string }) => err.stdout,
      );
    };
    expect(await typeErrors('client', CLIENT)).toBe('');
    // The types are real: a misspelt field of the sign-in body does not compile.
    expect(await typeErrors('misspelt', CLIENT.replace('password: process.env', 'passwort: process.env'))).toMatch(/misspelt\.ts.*error TS\d+/);

    const admin = bearer(await adminToken(s, 'admin', 'admin-password-1'));
    const agent = await s.startAgent((await createKey(s.app, admin, 'agent')).key, { name: 'generated-client-target' });
    const { stdout } = await run(process.execPath, ['--import', 'tsx', path.join(work, 'client.ts')], {
      cwd: ROOT,
      env: { ...process.env, RMM_URL: s.url, RMM_PASSWORD: 'admin-password-1', RMM_AGENT: agent.id },
    });
    expect(stdout.trim().split('\n')).toEqual(['signed in as admin', 'agents: generated-client-target', 'exec: 0 hello from a generated client']);
  }, 120_000);
});

/** The script: only the generated types tell it the shapes (a wrong field name fails tsc). */
const CLIENT = `import type { paths } from './schema.js';

// Plain indexed access: a path, method, status or field the document does not have fails tsc.
type LoginBody = NonNullable<paths['/api/v1/auth/login']['post']['requestBody']>['content']['application/json'];
type LoginAnswer = paths['/api/v1/auth/login']['post']['responses'][200]['content']['application/json'];
type AgentList = paths['/api/v1/agents']['get']['responses'][200]['content']['application/json'];
type ExecBody = NonNullable<paths['/api/v1/agents/{id}/exec']['post']['requestBody']>['content']['application/json'];
type ExecAnswer = paths['/api/v1/agents/{id}/exec']['post']['responses'][200]['content']['application/json'];

const base = process.env.RMM_URL!;

async function call<T>(method: string, url: string, body: unknown, token?: string): Promise<T> {
  const res = await fetch(base + url, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { authorization: 'Bearer ' + token } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(method + ' ' + url + ': ' + res.status + ' ' + (await res.text()));
  return (await res.json()) as T;
}

const login: LoginBody = { username: 'admin', password: process.env.RMM_PASSWORD! };
const signedIn = await call<LoginAnswer>('POST', '/api/v1/auth/login', login);
if (!('token' in signedIn) || !signedIn.token) throw new Error('no token');
console.log('signed in as ' + login.username);
const agents = await call<AgentList>('GET', '/api/v1/agents', undefined, signedIn.token);
console.log('agents: ' + agents.map((a) => a.name).join(', '));
const exec: ExecBody = { command: 'echo hello from a generated client', timeout: 30 };
const answer = await call<ExecAnswer>('POST', '/api/v1/agents/' + process.env.RMM_AGENT + '/exec', exec, signedIn.token);
console.log('exec: ' + answer.exit_code + ' ' + answer.stdout.trim());
`;
