import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import { PGLITE_PASS_ONLY } from './test/pglite-pass-only.js';

const pgliteOnlyFiles = PGLITE_PASS_ONLY.flatMap((group) => group.files);
const missing = pgliteOnlyFiles.filter((file) => !existsSync(new URL(file, import.meta.url)));
if (missing.length > 0) throw new Error(`test/pglite-pass-only.ts names files that do not exist: ${missing.join(', ')}`);

export default defineConfig({
  test: {
    // Each pass under a name of its own, so that each keeps its own durations in vitest's cache, which
    // orders a run's files longest first. Under one name the PostgreSQL pass ordered itself by the PGlite
    // pass's durations, in which the PostgreSQL-only files (the cluster's) took no time: they started last
    // and ran on alone for half a minute at the end of the pass (2026-11-28: 225–273 s of 273).
    name: process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // The PostgreSQL pass (TEST_DATABASE_URL set) leaves out what the database takes no part in (test/pglite-pass-only.ts).
    exclude: process.env.TEST_DATABASE_URL ? [...configDefaults.exclude, ...pgliteOnlyFiles] : configDefaults.exclude,
    globalSetup: ['test/global-setup.ts'],
    // Registers, for every file, the after-all hook that runs the helpers' cleaners (test/helpers/file-cleanup.ts).
    setupFiles: ['test/each-file-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // expect.poll waits 1 s by default: a loaded CI machine took longer to retitle a console page, and
    // the test failed though the page was right. A poll that never matches still fails, 10 s later.
    expect: { poll: { timeout: 10_000 } },
    pool: 'forks',
    // Two test files per core: most files spend much of their time waiting on sockets, timers and
    // child processes, so one per core left the cores half idle (measured on 2 cores: the PGlite pass
    // 282 s with 2 workers, 187 s with 4; 6 was no faster and timed out process-starting tests).
    maxWorkers: availableParallelism() * 2,
    // A worker process runs file after file (isolate: false) instead of a fresh process per file, which
    // paid Node's start-up and the import of the app's whole module graph again for each of ~145 files:
    // measured on 2 cores, the PostgreSQL pass 348 s isolated, 248 s shared; the PGlite pass 332 s shared.
    // It is safe because test files share nothing through modules: each builds its own app, database and
    // clock, and none mocks modules or stubs globals (no vi.mock, spyOn, stubEnv or stubGlobal). Keep it
    // so: state a file needs goes into what it builds, never into module scope.
    isolate: false,
  },
});
