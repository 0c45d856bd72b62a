// Where each agent's device serves VNC, RDP and its own web interface (migration 0031): a row only for an
// agent whose targets differ from the defaults.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

export interface StoredTargets {
  vnc_host: string;
  vnc_port: number;
  rdp_port: number;
  web_port: number | null;
}

export async function readTargets(db: Kysely<Database>, agentId: string): Promise<StoredTargets | undefined> {
  return db.selectFrom('agent_remote_access').select(['vnc_host', 'vnc_port', 'rdp_port', 'web_port']).where('agent_id', '=', agentId).executeTakeFirst();
}

export async function writeTargets(db: Kysely<Database>, agentId: string, targets: StoredTargets, now: Date): Promise<void> {
  await db
    .insertInto('agent_remote_access')
    .values({ agent_id: agentId, ...targets, updated_at: now })
    .onConflict((oc) => oc.column('agent_id').doUpdateSet({ ...targets, updated_at: now }))
    .execute();
}
