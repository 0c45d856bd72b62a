// Audit entries are written as responses go out, not before (contract §10 keeps the log; the durable
// commit is not awaited per request). This file holds the other half of that bargain: a server that
// stops right after answering a change still writes its entry before the database closes. (Only on
// PostgreSQL can this fail: PGlite's one connection runs the check after the queued writes anyway.)
import { afterAll, beforeAll, expect, it } from 'vitest';
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
