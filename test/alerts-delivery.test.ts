// Notifications survive a mail server outage and a server restart (issue 31, acceptance 3): with the
// SMTP receiver stopped, an agent goes offline and its alert fires (the email fails and waits for its
// retry in the outbox); the RMM server is then stopped and a new one started on the same database with
// the same secrets; the mail server comes back on its port; the one email arrives, once, and so does
// the resolution's, however long time runs on. Real parts: an in-process SMTP server (smtp-server,
// AUTH required) parsed with mailparser, the real app and database, the injected clock.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildServerApp } from '../src/apps/server/build-app.js';
import type { DbHandle } from '../src/db/create-db.js';
import { FakeClock } from '../src/platform/clock.js';
import { createLogger } from '../src/platform/logger.js';
import { BACKGROUND_LOOPS, testConfig, testSecrets } from './helpers/app.js';
import { createTestDb } from './helpers/db.js';
import { adminToken, apiKey, bearer, createKey } from './helpers/identity.js';
import { smtpReceiver, type SmtpReceiver } from './helpers/notification-receivers.js';

const MIN = 60_000;
const SMTP_AUTH = { user: 'rmm-alerts', pass: 'smtp-secret-pass-1' };
const clock = new FakeClock('2026-08-03T02:00:00Z');
const secrets = testSecrets();
let db: DbHandle;
let app: FastifyInstance;
let smtp: SmtpReceiver;

async function startApp(): Promise<FastifyInstance> {
  const config = await testConfig({ PUBLIC_URL: 'https://rmm.example.net' });
  const server = await buildServerApp({ config, db, logger: createLogger({ level: 'silent' }), secrets, clock, bcryptRounds: 4, backgroundJobs: true });
  await server.ready();
  return server;
}

beforeAll(async () => {
  db = await createTestDb();
  smtp = await smtpReceiver(SMTP_AUTH);
  app = await startApp();
});
afterAll(async () => {
  await app?.close();
  await smtp?.close();
  await db?.close();
});

/** Moves time in 10-second steps, each once every background loop is asleep again. */
async function minutes(n: number): Promise<void> {
  for (let i = 0; i < n * 6; i++) {
    await vi.waitFor(() => expect(clock.pendingSleepers).toBe(BACKGROUND_LOOPS), { timeout: 10_000 });
    await clock.advance(MIN / 6);
  }
  await vi.waitFor(() => expect(clock.pendingSleepers).toBe(BACKGROUND_LOOPS), { timeout: 10_000 });
}

const subjects = () => smtp.mails.map((m) => m.mail.subject ?? '');

describe('an email channel while its mail server is down and the RMM server restarts', () => {
  it('delivers the firing and the resolved email exactly once each when the mail server is back', async () => {
    const admin = bearer(await adminToken({ app, db } as never));
    const call = async (method: 'GET' | 'POST', url: string, payload?: object) => {
      const res = await app.inject({ method, url: `/api/v1${url}`, headers: admin, ...(payload ? { payload } : {}) });
      return { status: res.statusCode, body: res.json() as Record<string, unknown> & Array<Record<string, unknown>> };
    };
    const channel = await call('POST', '/notification-channels', {
      name: 'NOC mail',
      type: 'email',
      settings: { host: '127.0.0.1', port: smtp.port, security: 'none', username: SMTP_AUTH.user, from: 'rmm@example.net', to: ['noc@example.net', 'oncall@example.net'] },
      secrets: { password: SMTP_AUTH.pass },
    });
    expect(channel.status).toBe(201);
    const rule = await call('POST', '/alert-rules', { name: 'Firewall offline', kind: 'agent_offline', params: { minutes: 5 }, channel_ids: [channel.body.id] });
    expect(rule.status).toBe(201);
    const key = (await createKey(app, admin, 'agent')).key;
    const reg = await app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: apiKey(key), payload: { hostname: 'fw-branch-7', platform: 'freebsd' } });
    const agentId = (reg.json() as { agent_id: string }).agent_id;
    const heartbeat = async (server: FastifyInstance) =>
      expect((await server.inject({ method: 'POST', url: '/api/v1/agent/heartbeat', headers: apiKey(key), payload: { agent_id: agentId, platform: 'freebsd' } })).statusCode).toBe(200);
    await heartbeat(app);

    // The mail server goes away; the agent falls silent; the alert fires and its email cannot be sent.
    const port = smtp.port;
    await smtp.close();
    await minutes(8);
    const fired = await call('GET', `/alerts?rule_id=${rule.body.id}`);
    expect(fired.body).toMatchObject([{ state: 'firing', agent_id: agentId }]);
    const status = await call('GET', `/notification-channels/${channel.body.id}`);
    expect(status.body).toMatchObject({ status: { pending: 1 } });
    expect((status.body.status as { last_error: string | null }).last_error).toBeTruthy();

    // The RMM server restarts on the same database; the mail server comes back on its port.
    await app.close();
    app = await startApp();
    smtp = await smtpReceiver(SMTP_AUTH, { port });
    await minutes(3);
    await vi.waitFor(() => expect(subjects()).toHaveLength(1));
    const [mail] = smtp.mails;
    expect(mail!.to).toEqual(['noc@example.net', 'oncall@example.net']);
    expect(mail!.user).toBe(SMTP_AUTH.user);
    expect(mail!.mail.subject).toMatch(/FIRING.*fw-branch-7/);
    expect(mail!.mail.text).toContain(`https://rmm.example.net/agents/${agentId}`);
    expect(mail!.mail.text).toMatch(/no heartbeat for \d+ min \(limit 5 min\)/);

    // The agent returns: one resolved email; then nothing more while it keeps heartbeating (longer than
    // a claimed row's lease, so a message sent twice would show).
    await heartbeat(app);
    await minutes(1);
    await heartbeat(app);
    await minutes(1);
    await vi.waitFor(() => expect(subjects()).toHaveLength(2));
    expect(subjects()[1]).toMatch(/RESOLVED.*fw-branch-7/);
    for (let m = 0; m < 15; m++) {
      await heartbeat(app);
      await minutes(1);
    }
    expect(subjects()).toHaveLength(2);
    const after = await call('GET', `/notification-channels/${channel.body.id}`);
    expect(after.body).toMatchObject({ status: { pending: 0, last_error: null, failing_since: null } });
  });
});
