// A real OpenID Connect provider for single sign-on tests: oidc-provider on a loopback port, with an
// interaction handler of our own (the documented interactionDetails / interactionFinished way) instead
// of its login pages, so the test says who signs in next and which `amr` the provider reports, and a
// grant made for whatever the client asked, so there is no consent page either.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import Provider, { type OidcContext } from 'oidc-provider';

export interface TestIdpClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
}

export interface NextLogin {
  accountId: string;
  amr: string[];
  /** Answer the client with this OAuth error instead of signing anyone in. */
  error?: string;
}

export interface TestIdp {
  issuer: string;
  /** Claims of each account by subject; what the provider tells clients about them. */
  accounts: Map<string, Record<string, unknown>>;
  /** Who signs in at the next interaction (the login prompt). */
  next: NextLogin;
  /** The amr reported for sign-ins by a client, instead of next.amr (a provider that does MFA, one that does not). */
  amrByClient: Record<string, string[]>;
  /** How many times someone signed in here (interactions finished). */
  interactions: number;
  /**
   * Follows an authorization URL through the provider as a browser without a screen would (its own
   * cookies, every redirect) and returns the URL it finally sends the browser to: the client's callback.
   */
  authorize(url: string): Promise<URL>;
  close(): Promise<void>;
}

export async function startTestIdp(port: number, clients: TestIdpClient[]): Promise<TestIdp> {
  const issuer = `http://127.0.0.1:${port}`;
  const accounts = new Map<string, Record<string, unknown>>();
  const provider = new Provider(issuer, {
    clients: clients.map((c) => ({ ...c, grant_types: ['authorization_code'], response_types: ['code'] })),
    cookies: { keys: [randomBytes(16).toString('hex')] },
    // amr under openid: oidc-provider then puts what the login said into every ID token (as Entra does).
    claims: { openid: ['sub', 'amr'], profile: ['preferred_username', 'name', 'groups'], email: ['email', 'email_verified'] },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx: unknown, sub: string) => {
      const claims = accounts.get(sub);
      return claims ? { accountId: sub, claims: async () => ({ sub, ...claims }) } : undefined;
    },
    // Consent is assumed: the grant covers whatever the client asked for.
    loadExistingGrant: async (ctx: OidcContext) => {
      const { client, session, params, provider: op } = ctx.oidc;
      if (!client || !session?.accountId) return undefined;
      const grant = new op.Grant({ clientId: client.clientId, accountId: session.accountId });
      grant.addOIDCScope(String(params?.scope ?? 'openid'));
      await grant.save();
      return grant;
    },
  });
  const handle = provider.callback();
  const idp: TestIdp = {
    issuer,
    accounts,
    next: { accountId: 'nobody', amr: ['pwd'] },
    amrByClient: {},
    interactions: 0,
    authorize: (url) => followThrough(url, issuer),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((req, res) => {
    if (!req.url?.startsWith('/interaction/')) return handle(req, res);
    void (async () => {
      const details = await provider.interactionDetails(req, res);
      const { accountId, error } = idp.next;
      const amr = idp.amrByClient[String(details.params.client_id)] ?? idp.next.amr;
      idp.interactions += 1;
      const result = error ? { error, error_description: 'The user cancelled the sign-in' } : { login: { accountId, amr } };
      await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
    })().catch((err: unknown) => {
      res.statusCode = 500;
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return idp;
}

/** Redirects within the provider, with its cookies, until one leads elsewhere. */
async function followThrough(start: string, issuer: string): Promise<URL> {
  const jar = new Map<string, string>();
  let url = new URL(start);
  for (let hop = 0; hop < 10; hop++) {
    if (url.origin !== new URL(issuer).origin) return url;
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attrs] = line.split(';');
      const [name = '', value = ''] = pair.split('=');
      const gone = value === '' || attrs.some((a) => /^\s*max-age=0\s*$/i.test(a) || (/^\s*expires=/i.test(a) && Date.parse(a.split('=')[1] ?? '') < Date.now()));
      if (gone) jar.delete(name.trim());
      else jar.set(name.trim(), value);
    }
    const location = res.headers.get('location');
    if (!location) throw new Error(`the provider answered ${res.status} without a redirect: ${(await res.text()).slice(0, 300)}`);
    url = new URL(location, url);
  }
  throw new Error('too many redirects at the provider');
}
