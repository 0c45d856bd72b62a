// CPU used by PostgreSQL on behalf of one database: the user + system time of the server processes
// (backends) connected to it, read from /proc/<pid>/stat. Works when PostgreSQL runs on this machine
// and its /proc entries are readable; otherwise the figure is undefined and left out. A backend that
// closes between two reads takes its time since the earlier read with it: the pool closes connections
// idle for 10 s, so over longer measurements watchBackendCpu reads every second.
import { readFile } from 'node:fs/promises';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';

const TICKS_PER_S = 100; // USER_HZ on Linux

export type BackendTicks = Map<number, number>;

async function ticksOf(pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name in parentheses: state is the 3rd field; utime and stime the 14th and 15th.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(rest[11]) + Number(rest[12]);
  } catch {
    return undefined;
  }
}

/**
 * The CPU ticks of each backend of the current database, or undefined when /proc shows none of them
 * (a backend that exited since pg_stat_activity listed it is left out).
 */
export async function readBackendTicks(db: Kysely<Database>, options: { leaveOutOwn?: boolean } = {}): Promise<BackendTicks | undefined> {
  // leaveOutOwn: a reader outside the server (capacity.ts) is not one of the server's backends.
  const { rows } = await sql<{ pid: number }>`select pid from pg_stat_activity where datname = current_database() ${options.leaveOutOwn ? sql`and pid <> pg_backend_pid()` : sql``}`.execute(db);
  const ticks: BackendTicks = new Map();
  for (const { pid } of rows) {
    const t = await ticksOf(pid);
    if (t !== undefined) ticks.set(pid, t);
  }
  return ticks.size > 0 ? ticks : undefined;
}

/** CPU ms the backends used between two reads (a backend started in between counts from zero). */
export function backendCpuMs(from: BackendTicks | undefined, to: BackendTicks | undefined): number | undefined {
  if (!from || !to) return undefined;
  let ticks = 0;
  for (const [pid, t] of to) ticks += t - (from.get(pid) ?? 0);
  return (ticks * 1000) / TICKS_PER_S;
}

/** Reads the backends' CPU now and every `everyMs` until stopped; stop() gives the CPU ms in between. */
export function watchBackendCpu(db: Kysely<Database>, everyMs = 1000): { stop(): Promise<number | undefined> } {
  const base = new Map<number, number>();
  const last = new Map<number, number>();
  let failed = false;
  let first = true;
  const read = async () => {
    const ticks = await readBackendTicks(db).catch(() => undefined);
    if (!ticks) failed = true;
    for (const [pid, t] of ticks ?? []) {
      if (first) base.set(pid, t);
      last.set(pid, t);
    }
    first = false;
  };
  let reading = read();
  const timer = setInterval(() => (reading = reading.then(read)), everyMs);
  return {
    async stop() {
      clearInterval(timer);
      await reading;
      await read();
      if (failed) return undefined;
      let ticks = 0;
      for (const [pid, t] of last) ticks += t - (base.get(pid) ?? 0);
      return (ticks * 1000) / TICKS_PER_S;
    },
  };
}
