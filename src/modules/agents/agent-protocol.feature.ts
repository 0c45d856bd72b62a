// What agents call over HTTP (the spec's /agent/register and /agent/heartbeat, the updater's and the
// inventory's endpoints) and the heartbeat path behind it: group-committed batches with their metric
// samples and attention facts. Each committed batch is announced (`heartbeats.committed`: alert
// thresholds). On PGlite it also keeps the agents table vacuumed and the WAL checkpointed.
import { serverFeature } from '../../apps/server/server-feature.js';
import { PgliteUpkeep } from '../../db/pglite-upkeep.js';
import { AttentionFactsWriter } from '../attention/attention-facts.js';
import type { ExtractedSample } from '../metrics/extract-samples.js';
import { agentProtocolRoutes } from './agent-protocol.routes.js';
import { HeartbeatWriter } from './heartbeat-writer.js';

/** A stored heartbeat and the samples taken from it. */
export interface CommittedHeartbeat {
  agentId: string;
  customerId: number | null;
  at: Date;
  samples: readonly ExtractedSample[];
}

declare module '../../apps/server/server-feature.js' {
  interface ServerEvents {
    /** Announced synchronously after each batch commits, before its requests are answered. */
    'heartbeats.committed': readonly CommittedHeartbeat[];
  }
}

export const agentProtocolFeature = serverFeature({
  name: 'agent-protocol',
  needs: ['agents', 'audit', 'updates', 'softwareInventory', 'sampleWriter'],
  setup({ db, logger, deps, events, agents, audit, updates, softwareInventory, sampleWriter }) {
    const pglite = db.dialect === 'pglite';
    // PGlite has no autovacuum and no checkpointer: without this, every heartbeat's replaced system text
    // stays as dead rows, and all the WAL written since the start stays on disk.
    const upkeep = pglite ? new PgliteUpkeep(db.db, logger, { tables: ['agents', 'agent_system_parts'] }) : undefined;
    const heartbeats: HeartbeatWriter = new HeartbeatWriter(db.db, [sampleWriter, new AttentionFactsWriter()], {
      // PostgreSQL: two lanes. Each batch statement has a fixed cost (parse, plan, commit; the extensions'
      // CTEs grew it) that more lanes spread over fewer heartbeats: with four, PostgreSQL spent 351–407 µs of
      // CPU per heartbeat at 32 clients, with two 242–278 and ingest rose from 0.31–0.37 of bare to 0.42–0.44
      // (B1, bench/history/2026-11-27.md). PGlite has one connection: one lane.
      lanes: pglite ? 1 : 2,
      // PGlite runs each statement synchronously on this thread: while one batch is written no request is
      // read, so the batch after it would hold only the few requests parsed in between, and every statement
      // costs about 1.6 ms of fixed work besides its rows (measured: 2.8 ms per heartbeat alone, 1.1 ms in
      // batches of 64). Waiting a few ms lets the event loop read the requests that queued up meanwhile,
      // and up to 500 of them go together (501 parameters: one JSON for the rows, one per body).
      ...(pglite ? { maxBatch: 500, gatherMs: 5 } : {}),
      run: db.run,
      committed: (accepted) =>
        events.emit(
          'heartbeats.committed',
          accepted.map((a) => ({ agentId: a.input.agentId, customerId: a.customerId, at: a.input.receivedAt, samples: heartbeats.readingOf(a.input, sampleWriter) })),
        ),
      ...(upkeep ? { wrote: (bytes: number) => upkeep.noteWritten(bytes) } : {}),
    });
    return {
      routes: (api) =>
        api.register(agentProtocolRoutes, {
          agents,
          heartbeats,
          updates,
          inventory: softwareInventory,
          audit,
          maxInFlight: deps.maxAgentRequestsInFlight,
          maxRegistrationsInFlight: deps.maxRegistrationsInFlight,
        }),
    };
  },
});
