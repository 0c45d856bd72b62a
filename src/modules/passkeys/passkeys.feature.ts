// Passkeys (WebAuthn): registered per user once PUBLIC_URL is set, used to sign in or as the second
// step; a user with a passkey is asked for it at the second step (a second-factor source of auth).
import { serverFeature } from '../../apps/server/server-feature.js';
import { PasskeySignIn } from './passkey-sign-in.js';
import { passkeyRoutes } from './passkeys.routes.js';
import { PasskeyService } from './passkeys.service.js';

export const passkeysFeature = serverFeature({
  name: 'passkeys',
  needs: ['auth', 'settings'],
  setup({ db, clock, config, auth, settings }) {
    const passkeys = new PasskeyService(db.db, auth, clock);
    auth.addSecondFactorSource((userId) => passkeys.secondFactorsOf(userId));
    const signIn = new PasskeySignIn(db.db, auth, settings, clock);
    return {
      routes: (api) => api.register(passkeyRoutes, { passkeys, signIn, allowedOrigins: config.allowedOrigins, publicUrl: config.publicUrl }),
    };
  },
});
