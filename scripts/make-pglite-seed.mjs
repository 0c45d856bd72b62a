// Makes dist/pglite-seed.tar.gz: an empty database as PGlite's initdb leaves it, for the embedded
// install's first start (src/db/pglite-seed.ts). Running initdb inside the server grew its WebAssembly
// memory to about 570 MB, which the process then kept for ever (RSS 815 MiB idle after a first start,
// against about 300 MiB after a restart). Loading this 4–5 MB archive instead costs no more than an
// ordinary start. It depends on the PGlite version only, so the build makes it again when the lock
// file changes. Plain JavaScript: it runs before anything is compiled.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(ROOT, 'dist', 'pglite-seed.tar.gz');

const db = await PGlite.create();
const archive = Buffer.from(await (await db.dumpDataDir('gzip')).arrayBuffer());
await db.close();
mkdirSync(path.dirname(out), { recursive: true });
writeFileSync(out, archive);
process.stderr.write(`Made ${path.relative(ROOT, out)} (${(archive.length / 1048576).toFixed(1)} MB).\n`);
