// The RMM server as a Fastify app: plugins, then each feature's routes. It never listens; main.ts does,
// and tests drive it with inject().
import os from 'node:os';
import path from 'node:path';
import fastifyWebsocket from '@fastify/websocket';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Config } from '../../config/env.js';
import type { DbHandle } from '../../db/create-db.js';
import { PgliteUpkeep } from '../../db/pglite-upkeep.js';
import { AgentTrafficLogController } from '../../http/agent-traffic-log.js';
import { auditRecorderPlugin } from '../../http/audit-recorder.js';
import { authPlugin, registerJwt } from '../../http/auth.js';
import { errorHandlerPlugin } from '../../http/error-handler.js';
import { frameworkErrorHandler, inputGuardPlugin } from '../../http/input-guard.js';
import { listPagingGuardPlugin } from '../../http/pagination.js';
import { openApiPlugin } from '../../http/openapi.js';
import { securityHeadersPlugin } from '../../http/security-headers.js';
import { generateRequestId, requestIdPlugin } from '../../http/request-id.js';
import { routeAccessPlugin } from '../../http/route-access.js';
import { refusedUpgradePlugin } from '../../http/websocket-route.js';
import { agentProtocolRoutes } from '../../modules/agents/agent-protocol.routes.js';
import { agentRoutes } from '../../modules/agents/agents.routes.js';
import { AgentHub } from '../../modules/agent-hub/agent-hub.js';
import { agentSocketRoutes } from '../../modules/agent-hub/agent-hub.ws.js';
import { ConnectRate } from '../../modules/agent-hub/connect-rate.js';
import { MAX_MESSAGE_BYTES } from '../../modules/agent-hub/agent-protocol.js';
import { commandRoutes } from '../../modules/agent-hub/commands.routes.js';
import { localHubStatus } from '../../modules/agent-hub/hub-status.js';
import { createClusterFeature } from '../../modules/cluster/cluster.feature.js';
import { internalUrlOf } from '../../modules/cluster/cluster-tunnels.js';
import { AgentService } from '../../modules/agents/agents.service.js';
import { ConnectionBatches } from '../../modules/agents/connection-batches.js';
import { backupRoutes } from '../../modules/backups/backups.routes.js';
import { BackupService } from '../../modules/backups/backups.service.js';
import { createAlertingFeature } from '../../modules/alerts/alerting.feature.js';
import { alertRuleRoutes } from '../../modules/alerts/alert-rules.routes.js';
import { alertRoutes } from '../../modules/alerts/alerts.routes.js';
import { maintenanceWindowRoutes } from '../../modules/maintenance/maintenance-windows.routes.js';
import { notificationChannelRoutes } from '../../modules/notifications/channels.routes.js';
import { createTaskFeature } from '../../modules/tasks/tasks.feature.js';
import { taskRoutes } from '../../modules/tasks/tasks.routes.js';
import { CommandHistory } from '../../modules/history/command-history.js';
import { historyRoutes } from '../../modules/history/history.routes.js';
import { scriptRoutes } from '../../modules/scripts/scripts.routes.js';
import { ScriptService } from '../../modules/scripts/scripts.service.js';
import { BulkRunner } from '../../modules/bulk/bulk-runner.js';
import { gaugeSources } from '../../modules/prometheus/gauge-sources.js';
import { instrumentCommander } from '../../modules/prometheus/instrumented-commander.js';
import { countResponses, prometheusRoutes } from '../../modules/prometheus/prometheus.routes.js';
import { ServerMetrics } from '../../modules/prometheus/server-metrics.js';
import { bulkRoutes } from '../../modules/bulk/bulk.routes.js';
import { BulkService } from '../../modules/bulk/bulk.service.js';
import type { PtyLoader } from '../../modules/terminal/pty-module.js';
import { terminalRoutes } from '../../modules/terminal/terminal.routes.js';
import { vpnRoutes } from '../../modules/vpn/vpn.routes.js';
import { VpnService } from '../../modules/vpn/vpn.service.js';
import { eventRoutes } from '../../modules/agents/events.routes.js';
import { HeartbeatWriter } from '../../modules/agents/heartbeat-writer.js';
import { BlobStore } from '../../modules/firmware/blob-store.js';
import { SharedBlobStore } from '../../modules/firmware/shared-blob-store.js';
import { firmwareRoutes } from '../../modules/firmware/firmware.routes.js';
import { FirmwareService } from '../../modules/firmware/firmware.service.js';
import { UpdateFlags } from '../../modules/firmware/update-flag.js';
import { updateFlagRoutes } from '../../modules/firmware/update-flag.routes.js';
import { parsePublicKey } from '../../modules/firmware/firmware-signature.js';
import { UpdaterReports } from '../../modules/firmware/updater-report.js';
import { updaterReportRoutes } from '../../modules/firmware/updater-report.routes.js';
import { InstallerKeyService } from '../../modules/installer/installer-keys.service.js';
import { installerRoutes } from '../../modules/installer/installer.routes.js';
import { installRoutes } from '../../modules/install/install.routes.js';
import { InstallService } from '../../modules/install/install.service.js';
import { InstallerService } from '../../modules/installer/installer.service.js';
import { LayoutRegistry } from '../../modules/metrics/layouts.js';
import { MetricsMaintenance } from '../../modules/metrics/maintenance.js';
import { metricRoutes } from '../../modules/metrics/metrics.routes.js';
import { MetricsService } from '../../modules/metrics/metrics.service.js';
import { MetricSampleWriter } from '../../modules/metrics/sample-writer.js';
import { TunnelManager } from '../../modules/tunnels/tunnel-manager.js';
import { tunnelProxyRoutes } from '../../modules/tunnels/tunnel-proxy.ws.js';
import { tunnelRoutes } from '../../modules/tunnels/tunnels.routes.js';
import { StatusMonitor } from '../../modules/monitor/status-monitor.js';
import { apiKeyRoutes } from '../../modules/api-keys/api-keys.routes.js';
import { attentionRoutes } from '../../modules/attention/attention.routes.js';
import { AttentionService } from '../../modules/attention/attention.service.js';
import { AttentionFactsWriter } from '../../modules/attention/attention-facts.js';
import { auditRoutes } from '../../modules/audit/audit.routes.js';
import { ApiKeyThrottle } from '../../modules/auth/attempt-throttle.js';
import { authRoutes } from '../../modules/auth/auth.routes.js';
import { AuthService } from '../../modules/auth/auth.service.js';
import { customerRoutes } from '../../modules/customers/customers.routes.js';
import { PasskeySignIn } from '../../modules/passkeys/passkey-sign-in.js';
import { passkeyRoutes } from '../../modules/passkeys/passkeys.routes.js';
import { PasskeyService } from '../../modules/passkeys/passkeys.service.js';
import { healthRoutes } from '../../modules/health/health.routes.js';
import { HealthService } from '../../modules/health/health.service.js';
import { settingsRoutes } from '../../modules/settings/settings.routes.js';
import { createSsoFeature } from '../../modules/sso/sso.feature.js';
import { userRoutes } from '../../modules/users/users.routes.js';
import { SoftwareInventory } from '../../modules/wau/software-inventory.js';
import { wauRoutes } from '../../modules/wau/wau.routes.js';
import { webConsoleRoutes } from '../../modules/web-console/web-console.routes.js';
import { WauService } from '../../modules/wau/wau.service.js';
import { systemClock, type Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/logger.js';
import type { ServerSecrets } from '../../platform/server-secrets.js';
import { productVersion } from '../../platform/version.js';
import { createCoreServices } from './services.js';

export const API_PREFIX = '/api/v1';
const DEFAULT_BODY_LIMIT = 1024 * 1024;

export interface ServerDeps {
  config: Config;
  db: DbHandle;
  logger: Logger;
  secrets: ServerSecrets;
  clock?: Clock;
  /** bcrypt cost; lower only in tests. */
  bcryptRounds?: number;
  /** Registrations and heartbeats in progress at most, before agents are refused as overloaded; lower only in tests. */
  maxAgentRequestsInFlight?: number;
  /** Registrations among them, at most (agent-protocol.routes.ts); the product's default otherwise. */
  maxRegistrationsInFlight?: number;
  /** Start the periodic jobs (status monitor) when the app is ready; tests drive them directly instead. */
  backgroundJobs?: boolean;
  /** TLS key and certificate (PEM) when the server terminates TLS itself. */
  https?: { key: Buffer; cert: Buffer };
  /** Loads the web terminal's PTY library (the real one by default); tests make it fail as a missing binary does. */
  loadPty?: PtyLoader;
}

export async function buildServerApp(deps: ServerDeps): Promise<FastifyInstance> {
  const requestLog = new AgentTrafficLogController(deps.logger);
  const options: FastifyServerOptions = {
    loggerInstance: deps.logger,
    logController: requestLog,
    genReqId: generateRequestId,
    trustProxy: toFastifyTrustProxy(deps.config.trustProxy),
    bodyLimit: DEFAULT_BODY_LIMIT,
    // Our error handler answers requests that arrive during shutdown, in the contract's error body.
    return503OnClosing: false,
    frameworkErrors: frameworkErrorHandler(),
    ...(deps.https ? { https: deps.https } : {}),
  };
  const app = Fastify(options).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  // First: its onRequest hook marks upgrade requests, and its onResponse hook destroys the socket of a
  // refused upgrade. Registered after the auth hook, a 401 left the refused socket open (and shutdown waiting).
  await app.register(fastifyWebsocket, { options: { maxPayload: MAX_MESSAGE_BYTES } });
  await app.register(securityHeadersPlugin); // before any hook that may answer a request itself
  await app.register(refusedUpgradePlugin);
  await app.register(routeAccessPlugin);
  await app.register(requestIdPlugin);
  await app.register(errorHandlerPlugin);
  await app.register(inputGuardPlugin);
  await app.register(listPagingGuardPlugin);
  await app.register(openApiPlugin, { version: productVersion() });

  const clock = deps.clock ?? systemClock;
  const core = createCoreServices(deps.db, deps.secrets, clock, { bcryptRounds: deps.bcryptRounds });
  const tokens = await registerJwt(app, deps.secrets.jwtSecret, clock);
  const auth = new AuthService(deps.db.db, core.passwords, tokens, core.box, clock);
  const passkeys = new PasskeyService(deps.db.db, auth, clock);
  auth.otherSecondFactors = (userId) => passkeys.secondFactorsOf(userId);
  const sso = createSsoFeature({ db: deps.db.db, box: core.box, clock, logger: deps.logger, users: core.users, auth, publicUrl: deps.config.publicUrl });

  await app.register(authPlugin, {
    apiKey: (key) => core.apiKeys.authenticate(key),
    accessToken: (token) => auth.authenticateAccessToken(token),
    keyThrottle: new ApiKeyThrottle(clock),
    audit: core.audit,
  });
  await app.register(auditRecorderPlugin, { audit: core.audit, prefix: API_PREFIX });

  // The hub records connection events through the agent service, which in turn asks the hub (or, in
  // cluster mode, the cluster) who is connected; the cluster hears of every socket the hub takes or drops.
  const hub: AgentHub = new AgentHub(clock, deps.logger, {
    // A bulk action may be waiting for this agent: look at once instead of at the runner's next pass.
    recordEvent: (id, type, at) => agents.recordConnection(id, type, at).finally(() => type === 'connected' && bulkRunner.agentConnected(id)),
    onPresence: (id, holding, recorded) => cluster?.presenceChanged(id, holding, recorded),
  });
  const tunnels = new TunnelManager(hub, clock, deps.logger, deps.config.tunnels);
  const cluster = deps.config.cluster
    ? createClusterFeature({
        db: deps.db.db,
        logger: deps.logger,
        config: deps.config.cluster,
        hub,
        localStatus: () => localHubStatus(hub, tunnels),
        recordConnection: (id, type, at) => agents.recordConnection(id, type, at).catch((err: unknown) => deps.logger.warn({ err, agentId: id }, 'could not record a connection event')),
      })
    : undefined;
  const serverMetrics = new ServerMetrics();
  const commander = instrumentCommander(cluster?.commander ?? hub, serverMetrics);
  serverMetrics.observe(gaugeSources({ db: deps.db.db, stats: deps.db.stats, clock, hub, tunnels }));
  countResponses(app, serverMetrics, API_PREFIX);
  const remoteTunnels = cluster?.tunnels(
    tunnels,
    () => deps.config.cluster!.internalUrl ?? internalUrlOf(app.server.address(), deps.config.host, deps.config.cluster!.advertiseAddress),
  );
  const agents: AgentService = new AgentService(deps.db.db, clock, commander, new ConnectionBatches(deps.db.db, deps.db.dialect));
  const backups = new BackupService(deps.db.db, agents, commander, clock);
  const alerting = createAlertingFeature({
    db: deps.db.db,
    clock,
    logger: deps.logger,
    box: core.box,
    settings: core.settings,
    allowLoopback: deps.config.webhookAllowLoopback,
    publicUrl: deps.config.publicUrl,
    notificationOutcome: (delivered) => serverMetrics.notificationDeliveries.inc({ outcome: delivered ? 'delivered' : 'failed' }),
  });
  if (cluster) {
    alerting.routeThresholds(cluster.routeThresholds(alerting.thresholds));
    cluster.shareKeyRevocations(core.apiKeys);
  }
  const history = new CommandHistory(deps.db.db, clock, deps.logger);
  const scripts = new ScriptService(deps.db.db, clock, { agents, commander, history });
  const bulk = new BulkService(deps.db.db, clock, agents, commander, scripts);
  const bulkRunner = new BulkRunner(deps.db.db, clock, deps.logger, deps.config.cluster?.instanceId ?? `${os.hostname()}:${process.pid}`, { commander, history, scripts });
  bulk.wake = () => bulkRunner.wake();
  const tasks = createTaskFeature({ db: deps.db.db, clock, logger: deps.logger, hub: commander, agents, backups, history, scripts, bulk, settings: core.settings, allowLoopback: deps.config.webhookAllowLoopback, runFinished: (run) => {
      serverMetrics.taskRuns.inc({ status: run.status });
      alerting.taskOutcomes.finished(run);
    },
    webhookOutcome: (delivered) => serverMetrics.webhookDeliveries.inc({ outcome: delivered ? 'delivered' : 'failed' }),
  });
  app.addHook('onClose', async () => {
    // Runs in progress are left to the next start's recovery; their agent commands fail as the hub stops.
    await tasks.scheduler.stop();
    await bulkRunner.stop();
    await alerting.stop();
    await tunnels.stop();
    await hub.stop();
    await history.flush(); // the entries of commands answered (or failed by the stop) are written
  });
  // PGlite has one connection, so parallel batches would only queue; PostgreSQL writes a few at once.
  // PGlite also runs each statement synchronously on this thread: while one batch is written no request
  // is read, so the batch after it would hold only the few requests parsed in between, and every
  // statement costs about 1.6 ms of fixed work besides its rows (measured: 2.8 ms per heartbeat alone,
  // 1.1 ms in batches of 64). Waiting a few ms lets the event loop read the requests that queued up
  // meanwhile, and up to 500 of them go together (501 parameters: one JSON for the rows, one per body).
  const sampleWriter = new MetricSampleWriter(new LayoutRegistry(deps.db.db));
  // PGlite has no autovacuum and no checkpointer: without this, every heartbeat's replaced system text
  // stays as dead rows, and all the WAL written since the start stays on disk.
  const upkeep = deps.db.dialect === 'pglite' ? new PgliteUpkeep(deps.db.db, deps.logger, { tables: ['agents'] }) : undefined;
  // PostgreSQL: two lanes. Each batch statement has a fixed cost (parse, plan, commit; the extensions'
  // CTEs grew it) that more lanes spread over fewer heartbeats: with four, PostgreSQL spent 351–407 µs of
  // CPU per heartbeat at 32 clients, with two 242–278 and ingest rose from 0.31–0.37 of bare to 0.42–0.44
  // (B1, bench/README.md 2026-11-27). PGlite has one connection: one lane.
  const heartbeats = new HeartbeatWriter(deps.db.db, [sampleWriter, new AttentionFactsWriter()], {
    lanes: deps.db.dialect === 'pglite' ? 1 : 2,
    ...(deps.db.dialect === 'pglite' ? { maxBatch: 500, gatherMs: 5 } : {}),
    run: deps.db.run,
    committed: (accepted) =>
      alerting.heartbeatsCommitted(
        accepted.map((a) => ({ agentId: a.input.agentId, customerId: a.customerId, at: a.input.receivedAt, samples: heartbeats.readingOf(a.input, sampleWriter) })),
      ),
    ...(upkeep ? { wrote: (bytes: number) => upkeep.noteWritten(bytes) } : {}),
  });
  const monitor = new StatusMonitor(deps.db.db, clock, deps.config.monitorIntervalSeconds * 1000, deps.logger, () => alerting.evaluation.afterStatusCheck());
  const metricsMaintenance = new MetricsMaintenance(deps.db.db, clock, deps.logger, {
    retentionDays: deps.config.metricsRetentionDays,
    compressAfterDays: deps.config.metricsCompressAfterDays,
  });
  // Work that must happen once: on one instance always; in a cluster, on the leader only.
  const onceWork = {
    start() {
      tasks.scheduler.start();
      monitor.start();
      metricsMaintenance.start();
      alerting.start();
    },
    async stop() {
      await Promise.all([tasks.scheduler.stop(), monitor.stop(), metricsMaintenance.stop(), alerting.stop()]);
    },
  };
  // The last partial minute's agent traffic is summed up on close, whether or not the timer ran.
  app.addHook('onClose', async () => requestLog.stop());
  if (deps.backgroundJobs !== false) {
    app.addHook('onReady', async () => {
      requestLog.start();
      hub.start();
      tunnels.start();
      bulkRunner.start();
      if (cluster) await cluster.start(onceWork);
      else onceWork.start();
    });
    app.addHook('onClose', async () => {
      await Promise.all([monitor.stop(), metricsMaintenance.stop()]);
    });
  }
  // After the hub has closed its sockets (their presence written): give up the lease and leave.
  if (cluster) app.addHook('onClose', () => cluster.stop());

  // In a cluster, every instance serves every blob: PostgreSQL holds them, each instance caches them.
  const blobDir = path.join(deps.config.dataDir, 'blobs');
  const blobs = deps.config.cluster ? new SharedBlobStore(deps.db.db, blobDir, deps.logger) : new BlobStore(blobDir);
  if (blobs instanceof SharedBlobStore) {
    app.addHook('onReady', async () => {
      const { imported, missing } = await blobs.importLocal();
      if (imported > 0) deps.logger.info({ imported }, 'copied this instance\'s firmware and installer files into the shared store');
      if (missing.length > 0) deps.logger.warn({ missing }, 'firmware or installer files named in the database are in no store');
    });
  }
  const firmwareKey = deps.config.firmwarePublicKey ? parsePublicKey(deps.config.firmwarePublicKey) : null;
  const firmware = new FirmwareService(deps.db.db, blobs, clock, deps.config.firmwareMaxBytes, firmwareKey);
  const updates = new UpdateFlags(deps.db.db, agents, firmware, core.settings, clock);

  await app.register(healthRoutes, { health: new HealthService(deps.db.db, deps.db.dialect) });
  await app.register(prometheusRoutes, { registry: serverMetrics.registry, token: deps.config.metricsToken });
  await app.register(
    async (api) => {
      await api.register(authRoutes, { auth });
      await api.register(passkeyRoutes, { passkeys, signIn: new PasskeySignIn(deps.db.db, auth, core.settings, clock), allowedOrigins: deps.config.allowedOrigins, publicUrl: deps.config.publicUrl });
      await sso.routes(api);
      await api.register(userRoutes, { users: core.users, auth });
      await api.register(customerRoutes, { customers: core.customers, apiKeys: core.apiKeys });
      await api.register(wauRoutes, { wau: new WauService(deps.db.db, clock) });
      await api.register(apiKeyRoutes, { apiKeys: core.apiKeys });
      await api.register(auditRoutes, { audit: core.audit });
      await api.register(settingsRoutes, { settings: core.settings });
      await api.register(agentRoutes, { agents });
      await api.register(eventRoutes, { agents });
      await api.register(attentionRoutes, { attention: new AttentionService(deps.db.db, clock) });
      await api.register(agentProtocolRoutes, { agents, heartbeats, updates, inventory: new SoftwareInventory(deps.db.db, clock), audit: core.audit, maxInFlight: deps.maxAgentRequestsInFlight, maxRegistrationsInFlight: deps.maxRegistrationsInFlight });
      await api.register(agentSocketRoutes, { hub, agents, connectRate: new ConnectRate(clock) });
      await api.register(commandRoutes, { commander, history, agents, status: async () => (cluster ? cluster.status() : localHubStatus(hub, tunnels)) });
      await api.register(tunnelRoutes, { tunnels, agents, remote: remoteTunnels, advertiseAddress: deps.config.cluster?.advertiseAddress });
      await api.register(tunnelProxyRoutes, { tunnels, agents, logger: deps.logger, remote: remoteTunnels });
      await api.register(backupRoutes, { backups });
      await api.register(taskRoutes, { tasks: tasks.service });
      await api.register(historyRoutes, { db: deps.db.db, history, agents, clock });
      await api.register(scriptRoutes, { scripts });
      await api.register(bulkRoutes, { bulk });
      if (deps.config.terminal.enabled) {
        await api.register(terminalRoutes, { shell: deps.config.terminal.shell, allowedOrigins: deps.config.allowedOrigins, audit: core.audit, instanceId: deps.config.cluster?.instanceId, loadPty: deps.loadPty });
      }
      await api.register(vpnRoutes, { vpn: new VpnService(agents, commander) });
      await api.register(metricRoutes, { metrics: new MetricsService(deps.db.db, agents, clock) });
      const installerKeys = new InstallerKeyService(deps.db.db, core.box, clock);
      const installers = new InstallerService(deps.db.db, blobs, core.settings, installerKeys, clock, deps.config.firmwareMaxBytes);
      await api.register(installerRoutes, { installers, installerKeys, countUse: (caller) => core.apiKeys.countUse(caller) });
      const install = new InstallService({ db: deps.db.db, apiKeys: core.apiKeys, agents, firmware, installerKeys, settings: core.settings, clock });
      await api.register(installRoutes, { install });
      await api.register(firmwareRoutes, { firmware, maxBytes: deps.config.firmwareMaxBytes });
      await api.register(updateFlagRoutes, { flags: updates });
      await api.register(updaterReportRoutes, { reports: new UpdaterReports(deps.db.db, agents, clock) });
      await api.register(notificationChannelRoutes, { channels: alerting.channels });
      await api.register(alertRuleRoutes, { rules: alerting.rules });
      await api.register(maintenanceWindowRoutes, { windows: alerting.windows });
      await api.register(alertRoutes, { alerts: alerting.alerts });
    },
    { prefix: API_PREFIX },
  );
  await app.register(webConsoleRoutes, { dir: deps.config.webConsoleDir, logger: deps.logger });

  return app;
}

/** A hop count becomes "trust the nearest N proxies" (Fastify's types take no number). */
function toFastifyTrustProxy(value: Config['trustProxy']): FastifyServerOptions['trustProxy'] {
  return typeof value === 'number' ? (_address: string, hop: number) => hop < value : value;
}
