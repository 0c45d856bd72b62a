// The heartbeat batch extension that stores metric samples: each heartbeat with samples becomes one
// metric_points row (its layout id and its values), inserted in the same statement as the agents
// update of its batch, and only for the heartbeats that update accepted.
import { sql, type RawBuilder } from 'kysely';
import { scopeArray, type HeartbeatBatchExtension, type HeartbeatInput } from '../agents/heartbeat-writer.js';
import { samplesOf } from './extract-samples.js';
import type { LayoutRegistry } from './layouts.js';

export class MetricSampleWriter implements HeartbeatBatchExtension {
  constructor(private readonly layouts: LayoutRegistry) {}

  async statementFor(heartbeats: readonly HeartbeatInput[]): Promise<RawBuilder<unknown> | null> {
    const withSamples = heartbeats.map((h) => ({ h, samples: samplesOf(h.parsed) })).filter((x) => x.samples.length > 0);
    if (withSamples.length === 0) return null;
    const layoutIds = await this.layouts.idsFor(withSamples.map((x) => x.samples));
    const rows = withSamples.map(
      ({ h, samples }, i) =>
        sql`(${h.agentId}::text, ${scopeArray(h.scope)}::int[], ${h.receivedAt.toISOString()}::timestamptz, ${layoutIds[i]}::int, ${floatArray(samples.map((s) => s.value))}::float8[])`,
    );
    return sql`
      insert into metric_points (agent_id, time, layout, vals)
      select v.agent_id, v.time, v.layout, v.vals
      from (values ${sql.join(rows)}) as v(agent_id, scope, time, layout, vals)
      join updated as u on u.id = v.agent_id and u.scope is not distinct from v.scope`;
  }
}

/** A PostgreSQL array literal of finite numbers: one short text parameter instead of one per value. */
function floatArray(values: readonly number[]): string {
  return `{${values.join(',')}}`;
}
