// The embedded database's first start: an empty data directory is filled from the seed the build made
// (scripts/make-pglite-seed.mjs) rather than by PGlite's initdb, whose WebAssembly memory the process
// would keep for ever (about 570 MB: RSS 815 MiB idle after a first start, against 300 after a restart).
// Without a seed (running from the sources, not a build) initdb runs as before.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** dist/pglite-seed.tar.gz, from dist/src/db/ where the build puts this module. */
export const PGLITE_SEED = fileURLToPath(new URL('../../pglite-seed.tar.gz', import.meta.url));

/** The seed to start `dataDir` from: only for a directory without a database, and only when built. */
export async function seedFor(dataDir: string, seed = PGLITE_SEED): Promise<Blob | undefined> {
  if (existsSync(path.join(dataDir, 'PG_VERSION')) || !existsSync(seed)) return undefined;
  return new Blob([await readFile(seed)], { type: 'application/x-gzip' });
}
