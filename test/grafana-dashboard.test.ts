// The Grafana dashboard (issue 34, Build 2: deploy/grafana/rmm-dashboard.json) is built on the metrics the
// two apps really serve: every metric its queries name appears in a scrape of the RMM server or of the
// call-status service, and every query is valid PromQL (promtool check rules, on recording rules made of
// them).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { startCallstatus, type CallstatusTest } from './helpers/callstatus.js';

const PROMTOOL = '/usr/bin/promtool';
const DASHBOARD = path.resolve(import.meta.dirname, '../deploy/grafana/rmm-dashboard.json');

let rmm: TestApp;
let callstatus: CallstatusTest;
let queries: string[];

beforeAll(async () => {
  rmm = await buildTestApp();
  callstatus = await startCallstatus();
  const dashboard = JSON.parse(await readFile(DASHBOARD, 'utf8')) as { panels: Array<{ title: string; targets: Array<{ expr: string }> }> };
  queries = dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr));
});
afterAll(async () => {
  await rmm?.close();
  await callstatus?.close();
});

describe('the Grafana dashboard', () => {
  it('names only metrics the apps serve', async () => {
    const served = `${(await rmm.app.inject({ method: 'GET', url: '/metrics' })).body}\n${(await callstatus.app.inject({ method: 'GET', url: '/metrics' })).body}`;
    const types = new Set([...served.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!));
    const named = new Set(queries.flatMap((q) => [...q.matchAll(/\b(?:rmm|callstatus)_[a-z0-9_]+/g)].map((m) => m[0].replace(/_(bucket|count|sum)$/, ''))));
    expect(named.size).toBeGreaterThan(15);
    expect([...named].filter((name) => !types.has(name))).toEqual([]);
  });

  it.skipIf(!existsSync(PROMTOOL))('has only valid PromQL', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rmm-dashboard-'));
    try {
      const rules = ['groups:', '  - name: dashboard', '    rules:', ...queries.flatMap((q, i) => [`      - record: dashboard:query_${i}`, `        expr: ${JSON.stringify(q)}`])].join('\n');
      const file = path.join(dir, 'rules.yml');
      await writeFile(file, `${rules}\n`);
      const out = await new Promise<{ code: number; text: string }>((resolve) =>
        execFile(PROMTOOL, ['check', 'rules', file], (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, text: `${stdout}${stderr}` })),
      );
      expect(out.code, out.text).toBe(0);
      expect(out.text).toContain(`SUCCESS: ${queries.length} rules found`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
