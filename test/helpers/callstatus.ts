// The call-status service (second app) on its own fresh database, and a fake WLED light device: a real
// HTTP server that records what the service sends it. Data is seeded through the admin API and the
// attendance endpoint, as an administrator and the time-tracking system would.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect, vi } from 'vitest';
import { buildCallstatusApp } from '../../src/apps/callstatus/build-app.js';
import type { CallstatusDatabase } from '../../src/apps/callstatus/schema.js';
import { openPglite, openPostgres, type DbHandle } from '../../src/db/create-db.js';
import { CALLSTATUS_MIGRATIONS, migrateToLatest } from '../../src/db/migrator.js';
import type { Clock } from '../../src/platform/clock.js';
import { createLogger } from '../../src/platform/logger.js';
import { createPostgresUrl, TEST_PGLITE_SETTINGS, testDbKind } from './db.js';

export interface CallstatusTest {
  app: FastifyInstance;
  db: DbHandle<CallstatusDatabase>;
  /** The configured admin token; undefined when the admin API is disabled. */
  adminToken: string | undefined;
  /** A request to the admin API with the bearer token. */
  admin(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export interface CallstatusOptions {
  /** null disables the admin API (CALLSTATUS_ADMIN_TOKEN unset); default: a random token. */
  adminToken?: string | null;
  clock?: Clock;
}

export async function startCallstatus(options: CallstatusOptions = {}): Promise<CallstatusTest> {
  const logger = createLogger({ level: 'silent' });
  // The call-status service has its own migrations, so it starts from an empty database, not the
  // RMM template the other tests copy.
  const postgres = testDbKind() === 'postgres' ? await createPostgresUrl() : undefined;
  const db = postgres ? openPostgres<CallstatusDatabase>(postgres.url, logger) : await openPglite<CallstatusDatabase>({ settings: TEST_PGLITE_SETTINGS });
  await migrateToLatest(db, CALLSTATUS_MIGRATIONS);
  const adminToken = options.adminToken === null ? undefined : (options.adminToken ?? randomBytes(24).toString('base64url'));
  const app = await buildCallstatusApp({ db, logger, adminToken, clock: options.clock });
  await app.ready();
  return {
    app,
    db,
    adminToken,
    admin: (method, url, body) =>
      app.inject({ method, url, headers: { authorization: `Bearer ${adminToken ?? 'none'}` }, ...(body === undefined ? {} : { payload: body as object }) }),
    close: async () => {
      await app.close();
      await db.close();
      await postgres?.drop();
    },
  };
}

export type AdminResource = 'users' | 'devices' | 'assignments' | 'colors';

/** POST /api/admin/<resource>, which must answer 201; the created row (with its id). */
export async function create(t: CallstatusTest, resource: AdminResource, body: Record<string, unknown>): Promise<{ id: number } & Record<string, unknown>> {
  const res = await t.admin('POST', `/api/admin/${resource}`, body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** Unique extensions and personnel numbers across one test file. */
let counter = 50_000;
export const nextNumber = () => String(++counter);

export interface UserSetup {
  name: string;
  extension?: string;
  personalNr?: string;
  active?: boolean;
  /** Sent through POST /api/attendance after the assignments exist; omitted: no attendance yet. */
  attendance?: 'anwesend' | 'abwesend' | 'homeoffice';
  assignments?: Array<{ deviceId: number; segment: number }>;
}

export async function addUser(t: CallstatusTest, setup: UserSetup): Promise<{ id: number; name: string; extension: string; personalNr: string }> {
  const extension = setup.extension ?? nextNumber();
  const personalNr = setup.personalNr ?? nextNumber();
  const user = await create(t, 'users', { directory_id: `dir-${personalNr}`, display_name: setup.name, extension, personal_nr: personalNr, active: setup.active ?? true });
  for (const a of setup.assignments ?? []) await create(t, 'assignments', { user_id: user.id, device_id: a.deviceId, segment: a.segment });
  if (setup.attendance) await setAttendance(t, personalNr, setup.attendance, 200);
  return { id: user.id, name: setup.name, extension, personalNr };
}

export async function addDevice(t: CallstatusTest, hostname: string): Promise<number> {
  return (await create(t, 'devices', { name: `light ${hostname}`, hostname })).id;
}

export async function setAttendance(t: CallstatusTest, personalNr: string, status: string, expectStatus = 200): Promise<Record<string, unknown>> {
  const res = await t.app.inject({ method: 'POST', url: `/api/attendance/${encodeURIComponent(personalNr)}`, payload: { status } });
  expect(res.statusCode, res.body).toBe(expectStatus);
  return res.json();
}

/** One call event, GET or POST; the plain-text answer (always HTTP 200 per callstatus.md §4). */
export async function callEvent(t: CallstatusTest, method: 'GET' | 'POST', extension: string, event: 'callstart' | 'callend'): Promise<string> {
  const res = await t.app.inject({ method, url: `/${encodeURIComponent(extension)}/${event}` });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain/);
  return res.body;
}

export interface ActivityRow {
  time: string;
  user: string;
  attendance: string;
  new_status: string;
  action: string;
  request: string;
  result: string;
}

/** The activity log (newest first), only the rows of `user` when given. */
export async function activity(t: CallstatusTest, user?: string): Promise<ActivityRow[]> {
  const res = await t.admin('GET', '/api/admin/activity?limit=1000');
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as ActivityRow[]).filter((row) => user === undefined || row.user === user);
}

export async function stateOf(t: CallstatusTest, userId: number): Promise<{ attendance: string; phone_active: number } | undefined> {
  const res = await t.admin('GET', '/api/admin/state');
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as Array<{ user_id: number; attendance: string; phone_active: number }>).find((s) => s.user_id === userId);
}

// ---- The fake WLED device ----

export interface WledRequest {
  method: string;
  path: string;
  /** The parsed JSON body; undefined when there was none. */
  body: unknown;
  /** performance.now() at arrival. */
  at: number;
  /** Another request had arrived and was not yet answered: the device was asked two things at once. */
  overlapped: boolean;
}

export interface FakeWledOptions {
  /** Wait this long before answering each request (a slow device). */
  delayMs?: number;
  /** Never answer (the request hangs until the client gives up). */
  hang?: boolean;
  effects?: string[];
}

export interface FakeWled {
  /** `127.0.0.1:<port>`, as stored for a light device. */
  hostname: string;
  requests: WledRequest[];
  /** Bodies of the POST /json/state requests, in arrival order. */
  stateBodies(): unknown[];
  /** Requests that arrived and are still open (neither answered nor given up by the client). */
  readonly inFlight: number;
  /** Requests the device has answered so far. */
  readonly answered: number;
  /** Resolves once at least `count` POST /json/state requests have arrived. */
  waitForStates(count: number): Promise<void>;
  close(): Promise<void>;
}

export const WLED_EFFECTS = ['Solid', 'Blink', 'Breathe', 'Wipe'];

export async function startFakeWled(options: FakeWledOptions = {}): Promise<FakeWled> {
  const requests: WledRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let inFlight = 0;
  let answered = 0;

  const answer = (req: IncomingMessage, res: ServerResponse) => {
    // Counted as answered before the bytes leave, so the client's next request can never look overlapping.
    inFlight--;
    answered++;
    if (req.method === 'GET' && req.url === '/json/eff') return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(options.effects ?? WLED_EFFECTS));
    if (req.method === 'POST' && req.url === '/json/state') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}');
    res.writeHead(404).end();
  };

  const server = createServer((req, res) => {
    const record: WledRequest = { method: req.method ?? '', path: req.url ?? '', body: undefined, at: performance.now(), overlapped: inFlight > 0 };
    inFlight++;
    requests.push(record);
    let settled = false;
    const settle = (then: () => void) => {
      if (settled) return;
      settled = true;
      then();
    };
    // A client that gives up (timeout) closes the connection: the request is no longer in flight.
    res.on('close', () => settle(() => inFlight--));
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        record.body = text ? JSON.parse(text) : undefined;
      } catch {
        record.body = text;
      }
      if (options.hang) return;
      const timer = setTimeout(() => {
        timers.delete(timer);
        settle(() => answer(req, res));
      }, options.delayMs ?? 0);
      timers.add(timer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    hostname: `127.0.0.1:${port}`,
    requests,
    stateBodies: () => requests.filter((r) => r.method === 'POST' && r.path === '/json/state').map((r) => r.body),
    get inFlight() {
      return inFlight;
    },
    get answered() {
      return answered;
    },
    waitForStates: async (count) => {
      await vi.waitFor(() => expect(requests.filter((r) => r.method === 'POST' && r.path === '/json/state').length).toBeGreaterThanOrEqual(count), { timeout: 15_000, interval: 10 });
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A host:port where nothing listens (a port that was just free), for an unreachable device. */
export async function unreachableHostname(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `127.0.0.1:${port}`;
}
