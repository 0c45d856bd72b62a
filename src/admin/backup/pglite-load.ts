// Loads a PGlite data directory dump (an uncompressed tar) into a new directory: `node pglite-load.js
// TAR DIR`, a process of its own started by restore.ts. A dump that does not load made PGlite end the
// process with a rejection it left unhandled, or leave it running with nothing to do (issue 57); here
// either ends only this process, and the restore cleans up and says why.
import { readFile } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { pgliteArtifacts } from '../../db/pglite-artifacts.js';

const fail = (err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
};
process.on('unhandledRejection', fail);

const [tar, dataDir] = process.argv.slice(2);
try {
  const db = await PGlite.create({ ...(await pgliteArtifacts()), dataDir: dataDir!, loadDataDir: new Blob([await readFile(tar!)], { type: 'application/x-tar' }) });
  // A directory PGlite opens may still not be the server's database.
  await db.query('select count(*) from kysely_migration');
  await db.close();
  process.exit(0);
} catch (err) {
  fail(err);
}
