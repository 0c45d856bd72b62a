// The heartbeat batch extension that stores metric samples: each heartbeat with samples becomes one
// metric_points row (its layout id and its values), inserted in the same statement as the agents
// update of its batch, and only for the heartbeats that update accepted.
import type { HeartbeatBatchExtension } from '../agents/heartbeat-writer.js';
import { extractSamples, type ExtractedSample } from './extract-samples.js';
import type { LayoutRegistry } from './layouts.js';

export class MetricSampleWriter implements HeartbeatBatchExtension<ExtractedSample[]> {
  readonly columns = [
    { name: 'metric_layout', type: 'int' },
    { name: 'metric_values', type: 'float8[]' },
  ] as const;
  readonly statement = `
    insert into metric_points (agent_id, time, layout, vals)
    select v.id, v.received_at, v.metric_layout, v.metric_values
    from v join updated as u on u.ord = v.ord
    where v.metric_layout is not null`;

  constructor(private readonly layouts: LayoutRegistry) {}

  /** The heartbeat's samples (the threshold evaluator reads them too, through HeartbeatWriter.readingOf). */
  read(body: Record<string, unknown>): ExtractedSample[] {
    return extractSamples(body);
  }

  /** A heartbeat without samples gets nulls and no row. */
  async valuesFor(samples: readonly ExtractedSample[][]): Promise<Array<{ metric_layout: number | null; metric_values: number[] | null }>> {
    const withSamples = samples.filter((list) => list.length > 0);
    const layoutIds = withSamples.length === 0 ? [] : await this.layouts.idsFor(withSamples);
    let next = 0;
    return samples.map((list) =>
      list.length === 0 ? { metric_layout: null, metric_values: null } : { metric_layout: layoutIds[next++]!, metric_values: list.map((s) => s.value) },
    );
  }
}
