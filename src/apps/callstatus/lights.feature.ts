// The WLED lights (one per user, switched by calls and attendance) and the app's Prometheus metrics.
import { prometheusRoutes } from '../../modules/prometheus/prometheus.routes.js';
import { callstatusFeature } from './callstatus-feature.js';
import { CallstatusMetrics } from './callstatus-metrics.js';
import { Lights } from './lights.js';
import { WledClient } from './wled-client.js';

export const lightsFeature = callstatusFeature({
  name: 'lights',
  needs: [],
  setup({ db, deps, clock, logger }) {
    const metrics = new CallstatusMetrics();
    const lights = new Lights(db.db, deps.wled ?? new WledClient(), clock, logger, metrics);
    return {
      provides: { metrics, lights },
      rootRoutes: (app) => app.register(prometheusRoutes, { registry: metrics.registry, token: deps.metricsToken }),
    };
  },
});
