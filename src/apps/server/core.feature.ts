// The services every part of the server shares (services.ts: the same ones the start-up code and the
// admin CLI use): secrets' box, password hashing, API keys, users, customers, the audit log, settings.
import { serverFeature } from './server-feature.js';
import { createCoreServices, type CoreServices } from './services.js';

declare module './server-feature.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the core services, as parts
  interface ServerParts extends Omit<CoreServices, 'passkeys'> {}
  interface ServerEvents {
    /** API keys were deleted here: other instances forget their cached lookups (cluster mode). */
    'api-keys.deleted': Record<string, never>;
  }
}

export const coreFeature = serverFeature({
  name: 'core',
  needs: [],
  setup({ db, deps, clock, events }) {
    const core = createCoreServices(db, deps.secrets, clock, { bcryptRounds: deps.bcryptRounds });
    core.apiKeys.onKeysDeleted = () => events.emit('api-keys.deleted', {});
    const { box, passwords, apiKeys, users, customers, audit, settings } = core;
    return { provides: { box, passwords, apiKeys, users, customers, audit, settings } };
  },
});
