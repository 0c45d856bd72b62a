// Metric series from heartbeats: the sample writer the heartbeat path uses, the metrics routes, and
// compaction and retention (once per installation: leader work).
import { serverFeature } from '../../apps/server/server-feature.js';
import { LayoutRegistry } from './layouts.js';
import { MetricsMaintenance } from './maintenance.js';
import { metricRoutes } from './metrics.routes.js';
import { MetricsService } from './metrics.service.js';
import { MetricSampleWriter } from './sample-writer.js';

declare module '../../apps/server/server-feature.js' {
  interface ServerParts {
    sampleWriter: MetricSampleWriter;
    /** Layouts of metric_points rows, shared by every writer of samples (heartbeats, check perfdata). */
    metricLayouts: LayoutRegistry;
  }
}

export const metricsFeature = serverFeature({
  name: 'metrics',
  needs: ['agents'],
  setup({ db, clock, logger, config, leaderWork, agents }) {
    leaderWork.add(new MetricsMaintenance(db.db, clock, logger, { retentionDays: config.metricsRetentionDays, compressAfterDays: config.metricsCompressAfterDays }));
    const metricLayouts = new LayoutRegistry(db.db);
    return {
      provides: { sampleWriter: new MetricSampleWriter(metricLayouts), metricLayouts },
      routes: (api) => api.register(metricRoutes, { metrics: new MetricsService(db.db, agents, clock) }),
    };
  },
});
