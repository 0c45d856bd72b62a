// Audit entries and command-history rows are written behind answers already given (the change was
// made, the command ran): while PostgreSQL restarts they wait and are written when it is back, instead
// of being lost. The test's own cluster is stopped for a few seconds while entries are made.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPostgres, type DbHandle } from '../src/db/create-db.js';
import { migrateToLatest } from '../src/db/migrator.js';
import { AuditService } from '../src/modules/audit/audit.service.js';
import { HistoryWriter } from '../src/modules/history/history-writer.js';
import { systemClock } from '../src/platform/clock.js';
import { createLogger } from '../src/platform/logger.js';
import { createPgCluster, postgresBinDir, type PgCluster } from './helpers/pg-cluster.js';

const binDir = postgresBinDir();
let cluster: PgCluster | undefined;
let handle: DbHandle | undefined;

beforeAll(async () => {
  if (!binDir) return; // skipped below: no PostgreSQL binaries here
  cluster = await createPgCluster(binDir);
  handle = openPostgres(cluster.url, createLogger({ level: 'silent' }));
  await migrateToLatest(handle);
  await handle.db.insertInto('agents').values({ id: 'outage-agent', name: 'outage-agent', hostname: 'outage-agent', platform: 'linux' }).execute();
}, 120_000);
afterAll(async () => {
  await handle?.close();
  await cluster?.remove();
}, 60_000);

it.skipIf(!binDir)('writes the audit entries and history rows made while PostgreSQL was away once it is back', async () => {
  const db = handle!.db;
  const audit = new AuditService(db, systemClock);
  const history = new HistoryWriter(db, systemClock, createLogger({ level: 'silent' }));
  const ids = await Promise.all(Array.from({ length: 5 }, () => history.reserveId())); // a block, reserved ahead

  await cluster!.stop();
  const entries = Array.from({ length: 5 }, (_, i) =>
    audit.record({ actor_type: 'user', actor: 'admin', action: `outage.${i}`, method: 'POST', path: '/api/v1/agents/outage-agent/exec', status_code: 200, ip: '127.0.0.1' }),
  );
  const now = new Date();
  for (const id of ids) {
    history.started(id, { agent_id: 'outage-agent', source: 'exec', actor_type: 'user', actor: 'admin', script_id: null, script_name: null, command: `echo ${id}`, timeout_s: 30, started_at: now });
    history.finished(id, () => ({ finished_at: now, exit_code: 0, error: null, output: null, output_bytes: 0, output_truncated: false, output_preview: 'ok' }));
  }
  await new Promise((resolve) => setTimeout(resolve, 3000));
  await cluster!.start();

  await Promise.all(entries);
  await history.flush();
  const logged = await db.selectFrom('audit_log').select('action').where('action', 'like', 'outage.%').execute();
  expect(logged.map((r) => r.action).sort()).toEqual(['outage.0', 'outage.1', 'outage.2', 'outage.3', 'outage.4']);
  const rows = await db.selectFrom('command_history').select(['id', 'exit_code']).execute();
  expect(rows.map((r) => Number(r.id)).sort((a, b) => a - b)).toEqual(ids);
  expect(rows.every((r) => r.exit_code === 0)).toBe(true);
}, 120_000);
