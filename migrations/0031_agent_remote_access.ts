// Remote access (issue 60): where each agent's device serves VNC, RDP and its own web interface, when
// it differs from the defaults (VNC on 127.0.0.1:5900 of the device, RDP on 3389; the web interface on
// the platform's port from the settings). No row: the defaults. Goes with the agent.
import type { Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('agent_remote_access')
      .addColumn('agent_id', 'text', (c) => c.primaryKey().references('agents.id').onDelete('cascade'))
      .addColumn('vnc_host', 'text', (c) => c.notNull())
      .addColumn('vnc_port', 'integer', (c) => c.notNull())
      .addColumn('rdp_port', 'integer', (c) => c.notNull())
      .addColumn('web_port', 'integer')
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('agent_remote_access').execute();
  },
});

export default migration;
