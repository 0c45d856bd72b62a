// PGlite runs every statement synchronously on the server's own thread, inside a promise. A chain of
// statements (a group-commit pipeline writing batch after batch, requests queued on PGlite's mutex) thus
// runs as one long run of microtasks, and the event loop gets back to its poll phase only when the chain
// ends. Node accepts one new connection per turn of the loop, so under load the server stopped accepting:
// in fleet-scale's start-up burst (10,000 agents starting over a minute) turns took ~250 ms, the listen
// queue stayed full for the whole minute, and 9 agents of 10,000 got their WebSocket open while their
// heartbeats, riding connections opened before, were answered in about a second.
//
// Here statements take turns with the rest of the server: once PGlite has had the thread for SLICE_MS
// within one turn of the loop, the next statement first lets the loop go round (setImmediate), so
// sockets are accepted and read, timers fire, and new requests join the next batch. With 5 ms the same
// burst opened ~110 sockets a second against 167 wanted (the listen queue still full); with 1 ms every
// agent connected as it started and no heartbeat failed (bench/README.md, 2026-11-26 night).
import type { PGlite, Transaction } from '@electric-sql/pglite';

/** How long statements may run back to back before the event loop gets a turn. */
export const SLICE_MS = 1;

interface Slices {
  /** When PGlite got the thread in this turn of the loop, or undefined when it has not yet. */
  since: number | undefined;
}

function endSliceAtNextTurn(slices: Slices): void {
  slices.since = performance.now();
  setImmediate(() => {
    slices.since = undefined;
  });
}

async function takeTurn(slices: Slices): Promise<void> {
  if (slices.since === undefined) return endSliceAtNextTurn(slices);
  if (performance.now() - slices.since < SLICE_MS) return;
  await new Promise<void>((resolve) => setImmediate(resolve));
  endSliceAtNextTurn(slices);
}

/**
 * The same instance for Kysely's PGlite dialect, whose statements and transactions take turns with the
 * event loop. Everything else (close, dumps, status) is the instance's own.
 */
export function withTimeSlices(pglite: PGlite): PGlite {
  const slices: Slices = { since: undefined };
  const query: PGlite['query'] = async (...args) => {
    await takeTurn(slices);
    return pglite.query(...args);
  };
  const transaction: PGlite['transaction'] = async (callback, ...rest) => {
    await takeTurn(slices);
    // Kysely's PGlite driver keeps this promise without a handler until the commit, and waits for the
    // callback to begin. On an instance closed or closing meanwhile (a late heartbeat or task end as the
    // server stops) the callback never ran: the rejection went unhandled and the caller hung. Such a
    // transaction begins instead on a stand-in whose every statement fails with PGlite's reason, so
    // Kysely rolls back and the caller sees the error.
    let began = false;
    try {
      return await pglite.transaction(async (tx) => {
        began = true;
        return callback(tx);
      }, ...rest);
    } catch (err) {
      if (began) throw err;
      return callback(failingTransaction(err));
    }
  };
  return new Proxy(pglite, {
    get(target, property) {
      if (property === 'query') return query;
      if (property === 'transaction') return transaction;
      // The instance's own members use private fields: methods run on the instance, not on the proxy.
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** A transaction that never began: every statement fails with `reason`. */
function failingTransaction(reason: unknown): Transaction {
  const fail = () => Promise.reject(reason instanceof Error ? reason : new Error(String(reason)));
  return { query: fail, sql: fail, exec: fail, rollback: fail, listen: fail, closed: true } as unknown as Transaction;
}
