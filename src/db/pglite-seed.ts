// The embedded database's first start: an empty data directory is filled from the seed the build made
// (scripts/make-pglite-seed.mjs) rather than by PGlite's initdb, whose WebAssembly memory the process
// would keep for ever (about 570 MB: RSS 815 MiB idle after a first start, against 300 after a restart).
// Without a seed (running from the sources, not a build) initdb runs as before.
//
// The seed is loaded, and the app's migrations applied, in a short-lived child process
// (pglite-seed-child.ts); the server then opens a database that is ready. Both steps leave memory behind
// in the process that does them: the seed's 40 MB of files pass through buffers that an idle server
// never collects (only a full collection frees them, and an idle process runs none), and the migrations'
// hundreds of statements grow PGlite's memory and V8's compiled code. Measured from outside on
// 2026-11-30 (built server, PGLITE_SHARED_BUFFERS_MB=16, 60 s after it listened): 413 MiB after a first
// start that did both itself, 281 with the seed loaded in a child, against 246 after a restart.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, rename, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** dist/pglite-seed.tar.gz, from dist/src/db/ where the build puts this module. */
export const PGLITE_SEED = fileURLToPath(new URL('../../pglite-seed.tar.gz', import.meta.url));

/**
 * The child runs while the server waits for it, so a machine holds both at once. Its few hundred
 * statements run once: WebAssembly's baseline compiler alone is enough (it was faster, 1.46 against
 * 1.95 s, TurboFan compiling nothing), and a small young generation suffices. Measured on 2026-11-30
 * (the built child alone, `/usr/bin/time`): peak 407 MiB with Node's defaults, 301 with
 * `--liftoff-only`, 251 with both.
 */
const CHILD_NODE_FLAGS = ['--liftoff-only', '--max-semi-space-size=1'];

/** Whose migrations the child applies after loading the seed (src/db/migrator.ts's sets). */
export type SeedMigrations = 'rmm' | 'callstatus';

/** The seed to start `dataDir` from: only for a directory without a database, and only when built. */
export async function seedFor(dataDir: string, seed = PGLITE_SEED): Promise<Blob | undefined> {
  if (hasDatabase(dataDir) || !existsSync(seed)) return undefined;
  return new Blob([await readFile(seed)], { type: 'application/x-gzip' });
}

const hasDatabase = (dataDir: string) => existsSync(path.join(dataDir, 'PG_VERSION'));

/**
 * Fills `dataDir` from the seed, with `migrations` applied, in a child process, and returns the names of
 * the migrations applied; does nothing (undefined) when the directory holds a database or there is no
 * seed. The child fills a directory beside it, renamed into place only once complete, so a start that
 * was killed half-way leaves no half database behind.
 */
export async function fillFromSeed(dataDir: string, migrations: SeedMigrations | undefined, seed = PGLITE_SEED): Promise<string[] | undefined> {
  if (hasDatabase(dataDir) || !existsSync(seed)) return undefined;
  const filling = `${dataDir}.filling`;
  await rm(filling, { recursive: true, force: true });
  const child = fileURLToPath(new URL(`./pglite-seed-child${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url));
  // From the sources (the tests) the child is TypeScript too.
  const args = [...CHILD_NODE_FLAGS, ...(child.endsWith('.ts') ? ['--import', 'tsx', child] : [child])];
  const applied = JSON.parse(await runChild([...args, filling, seed, migrations ?? ''])) as string[];
  await rmdir(dataDir).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
  await rename(filling, dataDir);
  return applied;
}

/** Runs Node with `args`; resolves with what it printed, rejects with the end of its error output. */
function runChild(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => void (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => void (stderr = (stderr + chunk.toString()).slice(-4000)));
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      code === 0 ? resolve(stdout) : reject(new Error(`filling the embedded database from its seed failed (${signal ?? `exit ${code}`}): ${stderr.trim()}`)),
    );
  });
}
