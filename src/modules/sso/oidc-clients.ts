// The OpenID Connect client side, done by openid-client (discovery, the authorization URL with PKCE,
// the code exchange and the ID token's checks: signature, issuer, audience, expiry, nonce, state).
// An issuer is trusted configuration typed by an admin, so it is not held to the webhooks' rule against
// private addresses (a company's own provider often lives on the internal network); it must be https,
// or plain http on this machine's loopback (a provider in a test, or behind a local proxy).
import * as oidc from 'openid-client';
import type { Clock } from '../../platform/clock.js';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Seconds a request to a provider may take. */
const REQUEST_TIMEOUT_S = 10;
/** How long a provider's discovered metadata is reused before it is fetched again (its keys rotate). */
const METADATA_TTL_MS = 10 * 60_000;

/** Why an issuer URL cannot be used, or null when it can. */
export function issuerProblem(issuer: string): string | null {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return 'must be a URL like https://login.example.com/tenant';
  }
  if (url.username || url.password || url.search || url.hash) return 'must not carry credentials, a query or a fragment';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return null;
  return 'must be https (plain http only for a provider on this machine: localhost, 127.0.0.1 or ::1)';
}

export interface ProviderConnection {
  id: number;
  issuer: string;
  client_id: string;
  /** In clear text. */
  client_secret: string;
  /** A changed provider is discovered again. */
  updated_at: Date;
}

export class OidcClients {
  private readonly cache = new Map<number, { version: number; until: number; config: Promise<oidc.Configuration> }>();

  constructor(private readonly clock: Clock) {}

  /** The provider's client configuration, discovered from its issuer (cached for a while). */
  configuration(provider: ProviderConnection): Promise<oidc.Configuration> {
    const now = this.clock.now().getTime();
    const cached = this.cache.get(provider.id);
    if (cached && cached.version === provider.updated_at.getTime() && cached.until > now) return cached.config;
    const config = discover(provider);
    this.cache.set(provider.id, { version: provider.updated_at.getTime(), until: now + METADATA_TTL_MS, config });
    // A provider that could not be reached is asked again next time, not after the TTL.
    config.catch(() => {
      if (this.cache.get(provider.id)?.config === config) this.cache.delete(provider.id);
    });
    return config;
  }

  forget(providerId: number): void {
    this.cache.delete(providerId);
  }
}

async function discover(provider: ProviderConnection): Promise<oidc.Configuration> {
  const insecure = new URL(provider.issuer).protocol === 'http:';
  const found = await oidc.discovery(new URL(provider.issuer), provider.client_id, undefined, undefined, {
    timeout: REQUEST_TIMEOUT_S,
    ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
  });
  const metadata = found.serverMetadata();
  // client_secret_basic is OAuth's default and what a provider that lists nothing supports.
  const methods = metadata.token_endpoint_auth_methods_supported;
  const auth = !methods || methods.includes('client_secret_basic') ? oidc.ClientSecretBasic(provider.client_secret) : oidc.ClientSecretPost(provider.client_secret);
  const config = new oidc.Configuration(metadata, provider.client_id, provider.client_secret, auth);
  config.timeout = REQUEST_TIMEOUT_S;
  if (insecure) oidc.allowInsecureRequests(config);
  return config;
}
