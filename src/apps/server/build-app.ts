// The RMM server as a Fastify app: its features, in order. Each feature (a folder's *.feature.ts) says
// what it needs, what it provides, its routes and its start and stop; composeFeatures sets them up in
// this order, starts them in this order when the app is ready and stops them in reverse when it closes.
// The order is the wiring: a feature is listed after the ones it needs. The app never listens;
// main.ts does, and tests drive it with inject().
import Fastify, { type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { AgentTrafficLogController } from '../../http/agent-traffic-log.js';
import { composeFeatures } from '../../http/features.js';
import { httpFeature } from '../../http/http.feature.js';
import { serverOptions } from '../../http/fastify-options.js';
import { agentCommanderFeature } from '../../modules/agent-hub/agent-commander.feature.js';
import { agentHubFeature } from '../../modules/agent-hub/agent-hub.feature.js';
import { agentSocketsFeature } from '../../modules/agent-hub/agent-sockets.feature.js';
import { agentProtocolFeature } from '../../modules/agents/agent-protocol.feature.js';
import { agentsFeature } from '../../modules/agents/agents.feature.js';
import { alertingFeature } from '../../modules/alerts/alerting.feature.js';
import { apiKeysFeature } from '../../modules/api-keys/api-keys.feature.js';
import { attentionFeature } from '../../modules/attention/attention.feature.js';
import { auditFeature } from '../../modules/audit/audit.feature.js';
import { authFeature } from '../../modules/auth/auth.feature.js';
import { backupsFeature } from '../../modules/backups/backups.feature.js';
import { bulkFeature } from '../../modules/bulk/bulk.feature.js';
import { checksFeature } from '../../modules/checks/checks.feature.js';
import { clusterFeature } from '../../modules/cluster/cluster.feature.js';
import { LeaderWork } from '../../modules/cluster/leader-work.js';
import { leadershipFeature } from '../../modules/cluster/leadership.feature.js';
import { customersFeature } from '../../modules/customers/customers.feature.js';
import { deviceManageFeature } from '../../modules/device-manage/device-manage.feature.js';
import { deviceFilesFeature } from '../../modules/device-files/device-files.feature.js';
import { deviceSessionsFeature } from '../../modules/device-sessions/device-sessions.feature.js';
import { deviceShellFeature } from '../../modules/device-shell/device-shell.feature.js';
import { firmwareFeature } from '../../modules/firmware/firmware.feature.js';
import { healthFeature } from '../../modules/health/health.feature.js';
import { historyFeature } from '../../modules/history/history.feature.js';
import { installFeature } from '../../modules/install/install.feature.js';
import { installerFeature } from '../../modules/installer/installer.feature.js';
import { metricsFeature } from '../../modules/metrics/metrics.feature.js';
import { monitorFeature } from '../../modules/monitor/monitor.feature.js';
import { passkeysFeature } from '../../modules/passkeys/passkeys.feature.js';
import { prometheusFeature } from '../../modules/prometheus/prometheus.feature.js';
import { remoteAccessFeature } from '../../modules/remote-access/remote-access.feature.js';
import { scriptsFeature } from '../../modules/scripts/scripts.feature.js';
import { settingsFeature } from '../../modules/settings/settings.feature.js';
import { ssoFeature } from '../../modules/sso/sso.feature.js';
import { tasksFeature } from '../../modules/tasks/tasks.feature.js';
import { terminalFeature } from '../../modules/terminal/terminal.feature.js';
import { tunnelsFeature } from '../../modules/tunnels/tunnels.feature.js';
import { usersFeature } from '../../modules/users/users.feature.js';
import { vpnFeature } from '../../modules/vpn/vpn.feature.js';
import { wauFeature } from '../../modules/wau/wau.feature.js';
import { webConsoleFeature } from '../../modules/web-console/web-console.feature.js';
import { systemClock } from '../../platform/clock.js';
import { EventBus } from '../../platform/event-bus.js';
import { coreFeature } from './core.feature.js';
import { API_PREFIX, type ServerContext, type ServerDeps } from './server-feature.js';

export { API_PREFIX, type ServerDeps } from './server-feature.js';

export async function buildServerApp(deps: ServerDeps): Promise<FastifyInstance> {
  const trafficLog = new AgentTrafficLogController(deps.logger);
  const app = Fastify(serverOptions({ config: deps.config, logger: deps.logger, trafficLog, https: deps.https })).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  const context: ServerContext = {
    app,
    deps,
    config: deps.config,
    db: deps.db,
    logger: deps.logger,
    clock: deps.clock ?? systemClock,
    events: new EventBus(deps.logger),
    leaderWork: new LeaderWork(),
  };
  const features = [
    httpFeature(trafficLog),
    coreFeature,
    authFeature,
    passkeysFeature,
    ssoFeature,
    usersFeature,
    customersFeature,
    wauFeature,
    apiKeysFeature,
    auditFeature,
    settingsFeature,
    healthFeature,
    agentHubFeature,
    prometheusFeature,
    alertingFeature,
    clusterFeature, // listed before the agent sockets: it leaves the cluster after they are closed
    agentCommanderFeature,
    agentsFeature,
    attentionFeature,
    historyFeature, // listed before the agent sockets: it writes the entries of commands their stop failed
    agentSocketsFeature,
    tunnelsFeature,
    deviceSessionsFeature,
    deviceManageFeature,
    deviceFilesFeature,
    remoteAccessFeature,
    backupsFeature,
    scriptsFeature,
    bulkFeature,
    tasksFeature,
    terminalFeature,
    vpnFeature,
    metricsFeature,
    checksFeature, // after metrics: perfdata goes into its series
    firmwareFeature,
    deviceShellFeature, // after firmware: recordings live in its blob store
    installerFeature,
    installFeature,
    agentProtocolFeature,
    monitorFeature,
    webConsoleFeature,
    leadershipFeature, // last: once-per-installation work starts when all else runs, and stops first
  ];
  await composeFeatures(app, context, features, {
    prefix: API_PREFIX,
    start: deps.backgroundJobs !== false,
    logger: deps.logger,
  });
  return app;
}
