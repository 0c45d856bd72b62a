// The rows B2's "echo + two rows" baseline writes (issue 62): for every command, the audit entry and the
// command-history row the real server writes for an exec, with values of the same shapes, in ONE
// statement through the product's own driver (pg's pool on PostgreSQL, PGlite in this process) on a
// throw-away database migrated like the real server's. It is the least work that does what the contract
// requires, so the real server's CPU per command beside it says what the product's own machinery costs.
//
// The write starts after the answer has gone out, as the real server's do (audit and history are written
// behind the answer); settle() waits for the writes begun so far, so a block's CPU includes its rows.
import { randomBytes } from 'node:crypto';
import { CompiledQuery } from 'kysely';
import type { DbHandle } from '../../src/db/create-db.js';
import { preparedText } from '../../src/db/prepared-statements.js';
import { packOutput } from '../../src/modules/history/command-history.js';
import { openBackend } from './backends.js';
import type { Backend } from './databases.js';
import { hostnameFor } from './heartbeat-body.js';

// The columns audit.repo.ts and history.repo.ts write for an exec (the history row whole, as when a
// command is answered before its started row is due: history-writer.ts). A prepared text on PostgreSQL,
// as the product's hot statements are (compiled-once.ts).
const STATEMENT = preparedText(
  `with audit as (
     insert into audit_log (time, actor_type, actor, action, method, path, status_code, ip, target, customer_id)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
   )
   insert into command_history (agent_id, source, actor_type, actor, script_id, script_name, command, timeout_s,
     started_at, finished_at, exit_code, error, output, output_bytes, output_truncated, output_preview)
   values ($11, $12, $2, $3, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24)`,
);

export interface RowWriter {
  location: string;
  /** Starts writing one command's two rows; `startedAt` is when its request came in. */
  write(command: { command: string; timeout: number }, startedAt: Date): void;
  /** Waits for the writes begun so far: how many failed since the last settle, and the first failure. */
  settle(): Promise<{ errors: number; firstError: string | undefined }>;
  close(): Promise<void>;
}

export async function openRowWriter(backend: Backend): Promise<RowWriter> {
  const handle: DbHandle | string = await openBackend(backend, process.env);
  if (typeof handle === 'string') throw new Error(handle);
  // The history row's agent must exist (foreign key); named as the real server's first bench agent.
  const agentId = randomBytes(16).toString('hex');
  const name = hostnameFor(0);
  await handle.db.insertInto('agents').values({ id: agentId, name, hostname: name, platform: 'freebsd' }).execute();
  // An API key's hint as the audit log and history show it: first 8 characters, an ellipsis, the last 4.
  const actor = `rmm_${randomBytes(2).toString('hex')}…${randomBytes(2).toString('hex')}`;
  const path = `/api/v1/agents/${agentId}/exec`;
  const pending = new Set<Promise<void>>();
  let errors = 0;
  let firstError: string | undefined;

  const write: RowWriter['write'] = (command, startedAt) => {
    // The agent's answer in the bench is always this one (bench/command-roundtrip.ts's peer).
    const out = packOutput({ exit_code: 0, stdout: 'hi\n', stderr: '' });
    const values = [
      new Date(), 'api_key', actor, 'agent.exec', 'POST', path, 200, '127.0.0.1', `agent ${name}`, null,
      agentId, 'exec', null, null, command.command, command.timeout,
      startedAt, new Date(), 0, null, out.output, out.output_bytes, out.output_truncated, out.output_preview,
    ];
    const done: Promise<void> = handle.db.executeQuery(CompiledQuery.raw(STATEMENT, values)).then(
      () => void pending.delete(done),
      (err: unknown) => {
        pending.delete(done);
        errors++;
        firstError ??= err instanceof Error ? err.message.split('\n')[0] : String(err);
      },
    );
    pending.add(done);
  };

  return {
    location: handle.location,
    write,
    async settle() {
      await Promise.all(pending);
      const result = { errors, firstError };
      errors = 0;
      firstError = undefined;
      return result;
    },
    async close() {
      await Promise.all(pending);
      await handle.close();
    },
  };
}
