// The child process of pglite-seed.ts's fillFromSeed: loads the seed into a new data directory, applies
// the named app's migrations, and exits, taking the memory both steps grew with it.
// Arguments: the directory, the seed file, and 'rmm', 'callstatus' or '' (no migrations).
import { openPglite, sharedBuffers } from './create-db.js';
import { CALLSTATUS_MIGRATIONS, migrateToLatest, RMM_MIGRATIONS } from './migrator.js';
import { seedFor } from './pglite-seed.js';

const CHILD_SHARED_BUFFERS_MB = 16;
const [dataDir, seed, migrations] = process.argv.slice(2);
if (!dataDir || !seed) throw new Error('usage: pglite-seed-child <data directory> <seed> [rmm|callstatus]');
const loadDataDir = await seedFor(dataDir, seed);
if (!loadDataDir) throw new Error(`${dataDir} already holds a database, or ${seed} is missing`);
// A small buffer pool: PGlite makes all of it resident at start, and at PGlite's own default (128 MB)
// the child and the waiting server together peaked at 619 MiB (2026-11-30, bench/memory.ts).
const handle = await openPglite({ dataDir, loadDataDir, settings: sharedBuffers(CHILD_SHARED_BUFFERS_MB) });
const set = migrations === 'rmm' ? RMM_MIGRATIONS : migrations === 'callstatus' ? CALLSTATUS_MIGRATIONS : undefined;
const report = set ? await migrateToLatest(handle, set) : { applied: [] };
await handle.close();
// For the parent's log: the migrations applied here.
process.stdout.write(JSON.stringify(report.applied));
// The handle's timers (its time slices) would keep the process alive.
process.exit(0);
