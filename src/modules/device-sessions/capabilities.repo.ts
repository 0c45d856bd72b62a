// What an agent announced it can do, kept on its row so the console knows it while the agent is away
// and on every instance of a cluster.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

/** Writes the announced capabilities when they differ from the stored ones (most reconnects change nothing). */
export async function storeCapabilities(db: Kysely<Database>, agentId: string, capabilities: readonly string[]): Promise<void> {
  const sorted = [...capabilities].sort();
  // One array parameter: a plain JS array on the right of @> is spread by Kysely into a list of values.
  const value = sql<string[]>`${sorted}::text[]`;
  await db
    .updateTable('agents')
    .set({ capabilities: sorted })
    .where('id', '=', agentId)
    .where((eb) => eb.not(eb('capabilities', '@>', value).and('capabilities', '<@', value)))
    .execute();
}
