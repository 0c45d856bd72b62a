// Alerting (issue 31): notification channels, maintenance windows, alert rules and alerts, with their
// routes (alerting.ts builds the parts). It reacts to other features' events: heartbeats committed
// (thresholds), each status monitor pass (offline rules) and closed task runs (task-outcome rules); its
// evaluation and delivery run once per installation (leader work). Each notification try is announced.
import { serverFeature } from '../../apps/server/server-feature.js';
import { maintenanceWindowRoutes } from '../maintenance/maintenance-windows.routes.js';
import { notificationChannelRoutes } from '../notifications/channels.routes.js';
import { alertRuleRoutes } from './alert-rules.routes.js';
import { createAlertingFeature, type AlertingFeature } from './alerting.js';
import { alertRoutes } from './alerts.routes.js';

declare module '../../apps/server/server-feature.js' {
  interface ServerParts {
    alerting: AlertingFeature;
  }
  interface ServerEvents {
    'alert.notification-delivered': { delivered: boolean };
  }
}

export const alertingFeature = serverFeature({
  name: 'alerting',
  needs: ['box', 'settings'],
  setup({ db, clock, logger, config, events, leaderWork, box, settings }) {
    const alerting = createAlertingFeature({
      db: db.db,
      clock,
      logger,
      box,
      settings,
      allowLoopback: config.webhookAllowLoopback,
      publicUrl: config.publicUrl,
      notificationOutcome: (delivered) => events.emit('alert.notification-delivered', { delivered }),
    });
    leaderWork.add(alerting);
    events.on('heartbeats.committed', (observed) => alerting.heartbeatsCommitted(observed));
    events.on('status.checked', () => alerting.evaluation.afterStatusCheck());
    events.on('task.run-finished', (run) => alerting.taskOutcomes.finished(run));
    events.on('check.state-changed', () => alerting.checkStates.changed());
    return {
      provides: { alerting },
      async routes(api) {
        await api.register(notificationChannelRoutes, { channels: alerting.channels });
        await api.register(alertRuleRoutes, { rules: alerting.rules });
        await api.register(maintenanceWindowRoutes, { windows: alerting.windows });
        await api.register(alertRoutes, { alerts: alerting.alerts });
      },
    };
  },
});
