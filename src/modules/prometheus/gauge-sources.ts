// What the server's gauges read at each scrape: the hub's sockets and dropped frames, the tunnels, the
// database pool, and two small queries (connected agents by platform, every agent by status).
import { sql, type Kysely } from 'kysely';
import type { DbStats } from '../../db/create-db.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import type { AgentHub } from '../agent-hub/agent-hub.js';
import { ONLINE_BELOW_MS, STALE_UP_TO_MS } from '../agents/agent-status.js';
import type { TunnelManager } from '../tunnels/tunnel-manager.js';
import type { GaugeSources } from './server-metrics.js';

export function gaugeSources(deps: { db: Kysely<Database>; stats: DbStats; clock: Clock; hub: AgentHub; tunnels: TunnelManager }): GaugeSources {
  const { db, hub } = deps;
  return {
    async connectedByPlatform() {
      const ids = hub.status().agents.map((a) => a.agent_id);
      const counts: Record<string, number> = { freebsd: 0, linux: 0, windows: 0 };
      if (ids.length === 0) return counts;
      const rows = await db
        .selectFrom('agents')
        .select(['platform', (eb) => eb.fn.countAll<number>().as('n')])
        .where('id', 'in', ids)
        .groupBy('platform')
        .execute();
      for (const row of rows) counts[row.platform ?? 'unknown'] = Number(row.n);
      return counts;
    },
    async agentsByStatus() {
      const now = deps.clock.now().getTime();
      const onlineFrom = new Date(now - ONLINE_BELOW_MS);
      const staleFrom = new Date(now - STALE_UP_TO_MS);
      // The same windows as agent-status.ts: online under 2 min, stale 2 to 5 min (both included).
      const { rows } = await sql<{ online: number; stale: number; offline: number; unknown: number }>`
        select count(*) filter (where last_heartbeat > ${onlineFrom}) as online,
               count(*) filter (where last_heartbeat >= ${staleFrom} and last_heartbeat <= ${onlineFrom}) as stale,
               count(*) filter (where last_heartbeat < ${staleFrom}) as offline,
               count(*) filter (where last_heartbeat is null) as unknown
        from agents`.execute(db);
      const row = rows[0]!;
      return { online: Number(row.online), stale: Number(row.stale), offline: Number(row.offline), unknown: Number(row.unknown) };
    },
    tunnels: () => deps.tunnels.totals(),
    droppedFrames: () => hub.status().dropped_frames,
    pool: () => deps.stats.pool(),
    queryErrors: () => deps.stats.queryErrors(),
  };
}
