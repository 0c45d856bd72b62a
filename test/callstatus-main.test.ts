// The call-status service as an operator runs it: a real process beside the RMM server on one DATA_DIR
// (PGlite pass: each app has its own embedded database and lock) or one PostgreSQL database (its
// callstatus_* tables beside the server's), answering its spec endpoints and stopping on SIGTERM.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProcessDataPlace, PROCESS_TEST_TIMEOUT_MS, spawnServer, type ProcessDataPlace, type ServerProcess } from './helpers/spawn-server.js';

let place: ProcessDataPlace;
beforeAll(async () => {
  place = await createProcessDataPlace({ callstatus: true });
});
afterAll(() => place.cleanup());

/** DATA_DIR, and on the PostgreSQL pass the same database for both apps. */
const callstatusEnv = () => ({ ...place.env, ...(place.env.DATABASE_URL ? { CALLSTATUS_DATABASE_URL: place.env.DATABASE_URL } : {}) });

describe('npm run start:callstatus', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let rmm: ServerProcess;
  let callstatus: ServerProcess;
  afterAll(async () => {
    for (const proc of [rmm, callstatus]) proc?.kill('SIGKILL');
  });

  it('runs beside the RMM server on the same data place, serves its endpoints and stops on SIGTERM', async () => {
    rmm = spawnServer(place.env);
    await rmm.listening;
    callstatus = spawnServer({ ...callstatusEnv(), CALLSTATUS_ADMIN_TOKEN: 'a-long-enough-admin-token' }, 'src/callstatus-main.ts');
    await callstatus.listening;
    const base = `http://127.0.0.1:${callstatus.port}`;

    const usage = await fetch(`${base}/`);
    expect(usage.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await usage.text()).toContain('/{extension}/callstart');
    expect(await (await fetch(`${base}/201/callstart`, { method: 'POST' })).text()).toBe('Unknown extension: 201');
    expect((await fetch(`${base}/api/admin/users`)).status).toBe(401);
    const created = await fetch(`${base}/api/admin/users`, {
      method: 'POST',
      headers: { authorization: 'Bearer a-long-enough-admin-token', 'content-type': 'application/json' },
      body: JSON.stringify({ display_name: 'Anna Berg', personal_nr: '1234' }),
    });
    expect(created.status).toBe(201);
    expect(await (await fetch(`${base}/api/attendance`)).json()).toEqual([{ user: 'Anna Berg', personal_nr: '1234', status: 'unbekannt' }]);
    // The RMM server is unaffected by the second app's tables.
    expect((await fetch(`http://127.0.0.1:${rmm.port}/healthz`)).status).toBe(200);

    callstatus.kill('SIGTERM');
    expect(await callstatus.exited).toBe(0);
    rmm.kill('SIGTERM');
    expect(await rmm.exited).toBe(0);
  });

  it('answers 404 on its admin API while CALLSTATUS_ADMIN_TOKEN is unset, and says so at start', async () => {
    const proc = spawnServer(callstatusEnv(), 'src/callstatus-main.ts');
    await proc.listening;
    const res = await fetch(`http://127.0.0.1:${proc.port}/api/admin/users`, { headers: { authorization: 'Bearer anything-at-all-here' } });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { code: string }).code).toBe('NOT_FOUND');
    expect(proc.stdout.join('\n')).toContain('CALLSTATUS_ADMIN_TOKEN is not set');
    proc.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
  });
});
