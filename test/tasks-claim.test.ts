// Claiming due tasks (issue 11: "claims due tasks safely even if two server processes share one
// database"): many claimants at once, each on its own connection on PostgreSQL, claim every due task
// exactly once and open exactly one run for it; tasks not yet due and cancelled ones stay untouched.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { DbHandle } from '../src/db/create-db.js';
import { claimDue, insertTask } from '../src/modules/tasks/tasks.repo.js';
import { createTestDb } from './helpers/db.js';

let handle: DbHandle;
beforeAll(async () => {
  handle = await createTestDb();
});
afterAll(() => handle?.close());

it('gives every due task to exactly one of eight concurrent claimants', async () => {
  const now = new Date('2026-08-01T12:00:00Z');
  await handle.db.insertInto('agents').values({ id: 'a'.repeat(32), name: 'fw-claims', hostname: 'fw', created_at: now }).execute();
  const task = (nextRunAt: Date) =>
    insertTask(handle.db, {
      name: 'claim me',
      agent_id: 'a'.repeat(32),
      customer_number: null,
      kind: 'exec',
      params: { command: 'true', timeout: 60 },
      run_at: nextRunAt,
      cron: null,
      next_run_at: nextRunAt,
      webhook_url: null,
      health_check_timeout: 600,
      created_at: now,
    });
  const due = await Promise.all(Array.from({ length: 40 }, (_, i) => task(new Date(now.getTime() - i * 1000))));
  const later = await task(new Date(now.getTime() + 60_000));
  const cancelled = await task(now);
  await handle.db.updateTable('tasks').set({ status: 'cancelled' }).where('id', '=', cancelled.id).execute();

  const lease = new Date(now.getTime() + 300_000);
  const rounds = await Promise.all(Array.from({ length: 8 }, (_, i) => claimDue(handle.db, now, `host:${i}:x`, lease, 10)));
  const claimed = rounds.flat().map((c) => Number(c.task.id));
  expect(claimed.length).toBe(40);
  expect(new Set(claimed)).toEqual(new Set(due.map((t) => Number(t.id))));
  const runs = await handle.db.selectFrom('task_runs').select(['task_id']).execute();
  expect(runs.map((r) => Number(r.task_id)).sort((a, b) => a - b)).toEqual([...claimed].sort((a, b) => a - b));
  const untouched = await handle.db.selectFrom('tasks').select(['id', 'status']).where('id', 'in', [later.id, cancelled.id]).orderBy('id').execute();
  expect(untouched.map((t) => t.status)).toEqual(['scheduled', 'cancelled']);
});
