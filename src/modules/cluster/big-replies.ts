// Command answers too large for a bus message (a config backup can be 4 MB; NATS refuses messages over
// its max_payload, 1 MB by default, before sending). The holder stores the answer in PostgreSQL and
// replies with its id; the asker takes it (reads and deletes it in one statement). Chosen over asking
// operators to raise max_payload: it works with any NATS server as configured, and large messages
// would also hold up every other message on the one connection between two instances.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { Database } from '../../db/schema.js';

/** Answers larger than this (as JSON text) go through the database. */
export const INLINE_REPLY_LIMIT = 256 * 1024;
/** An answer nobody took (its asker died) is deleted after this. */
const FORGOTTEN_AFTER = '10 minutes';

export class BigReplies {
  constructor(private readonly db: Kysely<Database>) {}

  async store(json: string): Promise<string> {
    const id = randomUUID();
    await this.db.insertInto('cluster_replies').values({ id, body: json }).execute();
    return id;
  }

  /** The stored answer (parsed), or undefined when it is gone. */
  async take(id: string): Promise<unknown> {
    const row = await this.db.deleteFrom('cluster_replies').where('id', '=', id).returning('body').executeTakeFirst();
    return row ? JSON.parse(row.body) : undefined;
  }

  /** Deletes answers whose asker never came for them. */
  async sweep(): Promise<void> {
    await this.db.deleteFrom('cluster_replies').where('created_at', '<', sql<Date>`now() - ${FORGOTTEN_AFTER}::interval`).execute();
  }
}
