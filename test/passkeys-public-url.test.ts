// Passkey registration and PUBLIC_URL (issue 57, item 6): without PUBLIC_URL the relying-party id came
// from the Host header, which the sender of the request chooses, and a passkey stays bound to it. Now
// registration is refused (409, naming PUBLIC_URL) until it is set, the account page is told so, and
// with it set the server's own origin is PUBLIC_URL's whatever the Host header says.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { expectError } from './helpers/assertions.js';
import { bearer, login, seedUser } from './helpers/identity.js';

async function appWith(env: Record<string, string>): Promise<{ t: TestApp; user: Record<string, string> }> {
  const t = await buildTestApp({ env });
  await seedUser(t, 'nina', 'nina-password-7', { role: 'read' });
  return { t, user: bearer(await login(t.app, 'nina', 'nina-password-7')) };
}

const options = (t: TestApp, headers: Record<string, string>) =>
  t.app.inject({ method: 'POST', url: '/api/v1/auth/passkeys/registration-options', headers, payload: {} });
const status = (t: TestApp, headers: Record<string, string>) => t.app.inject({ method: 'GET', url: '/api/v1/auth/passkeys/registration', headers });
const challenges = (t: TestApp) => t.db.db.selectFrom('webauthn_challenges').selectAll().execute();

describe('without PUBLIC_URL', () => {
  let t: TestApp;
  let user: Record<string, string>;
  beforeAll(async () => ({ t, user } = await appWith({})));
  afterAll(() => t?.close());

  it('refuses passkey registration with 409 naming PUBLIC_URL, whatever Host and Origin say, storing nothing', async () => {
    for (const place of <Array<Record<string, string>>>[
      { origin: 'http://localhost' }, // the server as the browser reached it
      { host: 'evil.example', origin: 'http://evil.example' }, // a Host header of the sender's choosing
    ]) {
      const res = await options(t, { ...user, ...place });
      expectError(res, 409, 'CONFLICT');
      expect(res.json<{ error: string }>().error).toMatch(/PUBLIC_URL/);
    }
    expect(await challenges(t)).toEqual([]);
  });

  it('tells the account page why', async () => {
    const res = await status(t, user);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ available: false, reason: expect.stringMatching(/PUBLIC_URL is set/) });
    expectError(await status(t, {}), 401, 'UNAUTHORIZED');
  });
});

describe('with PUBLIC_URL', () => {
  let t: TestApp;
  let user: Record<string, string>;
  beforeAll(async () => ({ t, user } = await appWith({ PUBLIC_URL: 'https://rmm.example.net' })));
  afterAll(() => t?.close());

  it("binds passkeys to PUBLIC_URL's host name, not to the Host header", async () => {
    // Behind a proxy that does not forward the scheme and host: the browser's origin is still PUBLIC_URL's.
    const res = await options(t, { ...user, host: 'backend:8080', origin: 'https://rmm.example.net' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<{ rp: { id: string } }>().rp.id).toBe('rmm.example.net');
    // A request whose Host and Origin agree on another name is refused.
    const spoofed = await options(t, { ...user, host: 'evil.example', origin: 'http://evil.example' });
    expectError(spoofed, 403, 'FORBIDDEN');
    expect(spoofed.json<{ error: string }>().error).toMatch(/PUBLIC_URL's \(https:\/\/rmm\.example\.net\)/);
    expect(await challenges(t)).toHaveLength(1);
    expect((await status(t, user)).json()).toEqual({ available: true, reason: null });
  });
});
