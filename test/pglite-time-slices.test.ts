// The embedded database shares the server's thread: a long chain of statements (a group-commit pipeline
// under load) must let the server accept connections and run its timers in between, or a fleet starting
// up cannot open its WebSockets (src/db/pglite-time-slices.ts). PGlite only: on PostgreSQL statements
// wait on sockets and the event loop turns by itself.
import net from 'node:net';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wrapPglite, type DbHandle } from '../src/db/create-db.js';
import { pgliteArtifacts } from '../src/db/pglite-artifacts.js';
import { testDbKind } from './helpers/db.js';

const CLIENTS = 20;
const STATEMENTS = 600;

describe.skipIf(testDbKind() !== 'pglite')('PGlite statements take turns with the event loop', () => {
  let handle: DbHandle;
  let server: net.Server;
  let port: number;

  beforeAll(async () => {
    handle = wrapPglite(await PGlite.create(await pgliteArtifacts()), 'time-slices test');
    server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
  }, 60_000);

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await handle?.close();
  });

  it('accepts connections and fires timers while a chain of statements runs', async () => {
    let chainRunning = true;
    let acceptedWhileRunning = 0;
    let timerFiredWhileRunning = false;
    server.on('connection', (socket) => {
      if (chainRunning) acceptedWhileRunning++;
      socket.destroy();
    });
    const chain = (async () => {
      for (let i = 0; i < STATEMENTS; i++) await sql`select count(*) from generate_series(1, 200)`.execute(handle.db);
      chainRunning = false;
    })();
    setTimeout(() => (timerFiredWhileRunning = chainRunning), 0);
    const clients = Array.from({ length: CLIENTS }, () => net.connect(port, '127.0.0.1').on('error', () => {}));
    await chain;
    for (const client of clients) client.destroy();

    expect(timerFiredWhileRunning).toBe(true);
    expect(acceptedWhileRunning).toBe(CLIENTS);
  });
});

describe.skipIf(testDbKind() !== 'pglite')('a transaction begun on a closed embedded database', () => {
  it('fails at once with the reason, leaving no unhandled rejection and no caller waiting (CI saw both at a stop)', async () => {
    const pglite = await PGlite.create(await pgliteArtifacts());
    const handle = wrapPglite(pglite, 'closed test');
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      // The instance closes while the transaction waits for its turn (the slice is used up, so it yields
      // once first), as a stopping server's database does under late work.
      await sql`select 1`.execute(handle.db);
      const sliceEnd = performance.now() + 5;
      while (performance.now() < sliceEnd); // use the slice up
      const attempt = handle.db.transaction().execute(async (trx) => sql`select 1`.execute(trx));
      const closing = pglite.close();
      await expect(attempt).rejects.toThrow(/clos/);
      await closing;
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  }, 60_000);
});
