// Audit entries are written as responses go out, not before (contract §10 keeps the log; the durable
// commit is not awaited per request). This file holds the other half of that bargain: a server that
// stops right after answering a change still writes its entry before the database closes. (Only on
// PostgreSQL can this fail: PGlite's one connection runs the check after the queued writes anyway.)
// It also holds the batch write's one hazard: entries go to the database as one JSON parameter, which
// PostgreSQL refuses for a lone surrogate, so such text must not fail the entries written with it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AuditService } from '../src/modules/audit/audit.service.js';
import { systemClock } from '../src/platform/clock.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { adminToken, createCustomer } from './helpers/identity.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({});
});
afterAll(() => t.close());

it('writes the audit entries of answered changes before the app has closed', async () => {
  const admin = await adminToken(t);
  // Answered together, so several entries are still being written when the close begins.
  await Promise.all(Array.from({ length: 20 }, (_, i) => createCustomer(t.app, admin, `flush-${i}`)));
  await t.app.close(); // the database stays open: only the app's own shutdown may finish the writes
  const rows = await t.db.db.selectFrom('audit_log').select('path').where('action', '=', 'customer.create').execute();
  expect(rows).toHaveLength(20);
});

it('stores an entry with a lone surrogate in its text as U+FFFD, and the entries written with it', async () => {
  const audit = new AuditService(t.db.db, systemClock);
  const entry = { actor_type: 'user' as const, method: 'POST', status_code: 200, ip: '127.0.0.1' };
  await Promise.all([
    audit.record({ ...entry, actor: 'odd\ud800one', action: 'odd.entry', path: '/api/v1/odd\udc00' }),
    audit.record({ ...entry, actor: 'plain', action: 'plain.entry', path: '/api/v1/plain' }),
  ]);
  const rows = await t.db.db.selectFrom('audit_log').select(['actor', 'path']).where('action', 'in', ['odd.entry', 'plain.entry']).orderBy('action').execute();
  expect(rows).toEqual([
    { actor: 'odd\ufffdone', path: '/api/v1/odd\ufffd' },
    { actor: 'plain', path: '/api/v1/plain' },
  ]);
});
