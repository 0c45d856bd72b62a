// The status monitor: every MONITOR_INTERVAL_SECONDS it records which agents went stale or offline,
// once per installation (leader work), and announces each pass (`status.checked`: offline alert rules
// are evaluated before the next pass starts).
import { serverFeature } from '../../apps/server/server-feature.js';
import { StatusMonitor } from './status-monitor.js';

declare module '../../apps/server/server-feature.js' {
  interface ServerEvents {
    'status.checked': Record<string, never>;
  }
}

export const monitorFeature = serverFeature({
  name: 'monitor',
  needs: [],
  setup({ db, clock, logger, config, events, leaderWork }) {
    leaderWork.add(new StatusMonitor(db.db, clock, config.monitorIntervalSeconds * 1000, logger, () => events.emitAndWait('status.checked', {})));
    return {};
  },
});
