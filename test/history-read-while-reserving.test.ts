// An exec's history id is reserved while its command already travels to the agent
// (src/modules/history/command-history.ts): the first command of a block waits for a database round
// trip for its id. A technician who lists the history once the agent has the command must see it, so
// a read (CommandHistory.flush) waits for the reservations in progress, not only for queued rows.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { DbHandle } from '../src/db/create-db.js';
import { CommandHistory, type ExecAnswer } from '../src/modules/history/command-history.js';
import { systemClock } from '../src/platform/clock.js';
import { createLogger } from '../src/platform/logger.js';
import { createTestDb } from './helpers/db.js';

let handle: DbHandle;
beforeAll(async () => {
  handle = await createTestDb();
  await handle.db.insertInto('agents').values({ id: 'r'.repeat(32), name: 'fw-reserving', hostname: 'fw-reserving', created_at: new Date() }).execute();
});
afterAll(() => handle.close());

it('lists a command the agent already has while its id was still being reserved', async () => {
  const history = new CommandHistory(handle.db, systemClock, createLogger({ level: 'silent' }));
  let agentHasIt!: () => void;
  const sent = new Promise<void>((resolve) => (agentHasIt = resolve));
  let answer!: (a: ExecAnswer) => void;
  const run = history.run({ source: 'exec', actor_type: 'user', actor: 'alice' }, 'r'.repeat(32), 'uptime', 30, () => {
    agentHasIt();
    return new Promise<ExecAnswer>((resolve) => (answer = resolve));
  });
  await sent;
  // The read, as history.routes.ts does it: flush, then list.
  await history.flush();
  const listed = await handle.db.selectFrom('command_history').select(['id', 'command', 'finished_at']).where('agent_id', '=', 'r'.repeat(32)).execute();
  expect(listed).toEqual([expect.objectContaining({ command: 'uptime', finished_at: null })]);

  answer({ exit_code: 0, stdout: 'up\n', stderr: '' });
  expect((await run).history_id).toBe(Number(listed[0]!.id));
  await history.flush();
});
