// Prometheus metrics (issue 34) at /metrics: responses counted on the root app (heartbeats, refused
// sign-ins), gauges read at each scrape (hub, tunnels, database), and counters fed by other features'
// events (commands answered, task runs, webhook and notification deliveries).
import { API_PREFIX, serverFeature } from '../../apps/server/server-feature.js';
import { gaugeSources } from './gauge-sources.js';
import { countResponses, prometheusRoutes } from './prometheus.routes.js';
import { ServerMetrics } from './server-metrics.js';

export const prometheusFeature = serverFeature({
  name: 'prometheus',
  needs: ['hub', 'tunnels'],
  setup({ app, db, clock, config, events, hub, tunnels }) {
    const metrics = new ServerMetrics();
    metrics.observe(gaugeSources({ db: db.db, stats: db.stats, clock, hub, tunnels }));
    countResponses(app, metrics, API_PREFIX);
    events.on('command.answered', ({ command, outcome, seconds }) => {
      metrics.commands.inc({ command, outcome });
      metrics.commandSeconds.observe({ command }, seconds);
    });
    events.on('task.run-finished', (run) => metrics.taskRuns.inc({ status: run.status }));
    events.on('task.webhook-delivered', ({ delivered }) => metrics.webhookDeliveries.inc({ outcome: delivered ? 'delivered' : 'failed' }));
    events.on('alert.notification-delivered', ({ delivered }) => metrics.notificationDeliveries.inc({ outcome: delivered ? 'delivered' : 'failed' }));
    return { rootRoutes: (app) => app.register(prometheusRoutes, { registry: metrics.registry, token: config.metricsToken }) };
  },
});
