// Runs the server and the CLI as real processes, the way an operator does, for start-up, shutdown and
// CLI tests, on the database of the current test pass.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { inject } from 'vitest';
import { CALLSTATUS_MIGRATIONS } from '../../src/db/migrator.js';
import { createPostgresUrl, writeMigratedPglite } from './db.js';
import { afterEveryFile } from './file-cleanup.js';

export const ROOT = path.resolve(import.meta.dirname, '../..');

/** Entries that run from the run's compiled JavaScript (compiled-tree.ts); the agents keep tsx (see there). */
const COMPILED_ENTRIES = new Set(['src/main.ts', 'src/callstatus-main.ts', 'src/cli.ts']);

/**
 * Node's arguments to run an entry of the package: the server and the CLI from the run's compiled
 * JavaScript, as `npm start` runs dist/; anything else (the reference agent, which hashes its own entry
 * file and reads assets beside it; the updater) through tsx as `npm run agent` does.
 */
export function nodeArgs(entry: string): string[] {
  if (COMPILED_ENTRIES.has(entry)) return ['--enable-source-maps', path.join(inject('compiledRoot'), entry.replace(/\.ts$/, '.js'))];
  return ['--import', 'tsx', entry];
}

/**
 * Time for a test that starts processes: each one loads TypeScript and opens (or initialises) its own
 * database, and with the test files running side by side on two cores one start can take 10 s or more.
 */
export const PROCESS_TEST_TIMEOUT_MS = 120_000;

/** Where a spawned process keeps its data: a fresh DATA_DIR, plus a database of its own on the PostgreSQL pass. */
export interface ProcessDataPlace {
  dataDir: string;
  /** DATA_DIR, and DATABASE_URL on the PostgreSQL pass. */
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

/** Servers started by spawnServer in this test file that have not exited yet. */
const running = new Set<ChildProcess>();

/**
 * Kills the servers a failed or timed-out test left running. Without it they outlived the test run
 * (one timed-out test's server was still serving an hour and a half later) and wrote into data
 * directories already removed.
 */
async function killLeftovers(): Promise<void> {
  await Promise.all(
    [...running].map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    }),
  );
}

// After every file, its own hooks first (files that start servers without a data place).
afterEveryFile(killLeftovers);

export interface ProcessDataPlaceOptions {
  /**
   * `migrated` (default): the database already holds the schema, as after an installation's first
   * start; `new`: empty, for tests of what a first start or `rmm migrate` does to a new database.
   */
  database?: 'migrated' | 'new';
  /** Also give the call-status service its migrated embedded database (DATA_DIR/callstatus). */
  callstatus?: boolean;
}

/**
 * A data place for server, CLI and call-status processes. On PGlite a migrated place is loaded from
 * the run's dump instead of letting the process initialise a new data directory: initdb on disk takes
 * 5–15 s on these machines, loading the dump about one.
 */
export async function createProcessDataPlace(options: ProcessDataPlaceOptions = {}): Promise<ProcessDataPlace> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'rmm-proc-'));
  const migrated = (options.database ?? 'migrated') === 'migrated';
  const postgres = await createPostgresUrl(migrated ? 'migrated' : 'empty');
  if (!postgres && migrated) await writeMigratedPglite(path.join(dataDir, 'pglite'));
  if (!postgres && options.callstatus) await writeMigratedPglite(path.join(dataDir, 'callstatus', 'pglite'), CALLSTATUS_MIGRATIONS);
  return {
    dataDir,
    env: { DATA_DIR: dataDir, ...(postgres ? { DATABASE_URL: postgres.url } : {}) },
    cleanup: async () => {
      await killLeftovers();
      await rm(dataDir, { recursive: true, force: true });
      await postgres?.drop();
    },
  };
}

/** The test runner's environment without its database settings, plus `env`. */
export function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = { ...process.env };
  delete base.DATABASE_URL;
  delete base.TEST_DATABASE_URL;
  return { ...base, ...env };
}

export interface ServerProcess {
  /** Port it listens on (after `listening` resolved). */
  port: number;
  /** The process id (to read its memory from /proc). */
  pid: number;
  stdout: string[];
  stderr: string[];
  listening: Promise<void>;
  exited: Promise<number | null>;
  kill(signal: NodeJS.Signals): void;
}

/** Starts the RMM server (or, with `entry`, the call-status service) as a process on 127.0.0.1, any free port. */
export function spawnServer(env: Record<string, string>, entry: 'src/main.ts' | 'src/callstatus-main.ts' = 'src/main.ts'): ServerProcess {
  const child = spawn(process.execPath, nodeArgs(entry), {
    cwd: ROOT,
    env: childEnv({ HOST: '127.0.0.1', PORT: '0', CALLSTATUS_PORT: '0', LOG_LEVEL: 'info', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  const proc: ServerProcess = {
    port: 0,
    pid: child.pid ?? 0,
    stdout: [],
    stderr: [],
    listening: Promise.resolve(),
    exited: once(child, 'exit').then(([code]) => code as number | null),
    kill: (signal) => child.kill(signal),
  };
  readline.createInterface({ input: child.stderr }).on('line', (line) => proc.stderr.push(line));
  proc.listening = new Promise((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      proc.stdout.push(line);
      const match = /Server listening at https?:\/\/127\.0\.0\.1:(\d+)/.exec(line);
      if (match) {
        proc.port = Number(match[1]);
        resolve();
      }
    });
    void proc.exited.then((code) => reject(new Error(`server exited (${code}) before listening: ${proc.stdout.join('\n')}`)));
  });
  // Tests that expect an early exit never await `listening`; that must not count as unhandled.
  proc.listening.catch(() => undefined);
  return proc;
}

/** The `msg` fields of the JSON log lines written so far. */
export function messages(proc: ServerProcess): string[] {
  return proc.stdout.flatMap((line) => {
    try {
      return [String((JSON.parse(line) as { msg?: unknown }).msg)];
    } catch {
      return [];
    }
  });
}

/** The status of POST /auth/login against a spawned server. */
export async function loginStatus(port: number, username: string, password: string): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  return res.status;
}
