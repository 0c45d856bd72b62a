// The web terminal: a shell on the RMM server over a WebSocket (the spec's /terminal), off when
// TERMINAL_ENABLED is false; without its PTY library it answers 503 and says why.
import { serverFeature } from '../../apps/server/server-feature.js';
import { terminalRoutes } from './terminal.routes.js';

export const terminalFeature = serverFeature({
  name: 'terminal',
  needs: ['audit'],
  setup: ({ config, deps, audit }) => ({
    routes: (api) =>
      config.terminal.enabled
        ? api.register(terminalRoutes, { shell: config.terminal.shell, allowedOrigins: config.allowedOrigins, audit, instanceId: config.cluster?.instanceId, loadPty: deps.loadPty })
        : undefined,
  }),
});
