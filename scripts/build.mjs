// Builds what `npm start` runs: the server (TypeScript → dist/src, dist/migrations), the web console
// (Vite → dist/web) and the embedded database's empty seed (dist/pglite-seed.tar.gz). `--if-stale` (what
// `npm start` passes) builds only the parts whose sources changed since their last build here, so an
// unchanged tree starts at once instead of re-running the tools.
// A part's sources are hashed (source-hash.mjs), not dated.
// Plain JavaScript, no dependencies: it runs before anything is compiled.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sourceHash } from './source-hash.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const STAMPS = path.join(ROOT, 'dist', '.build-stamps');
const bin = (tool) => path.join(ROOT, 'node_modules', '.bin', tool);

const PARTS = [
  {
    name: 'server',
    what: 'the server (TypeScript into dist/)',
    sources: { dirs: ['src', 'migrations'], files: ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json'], skip: (file) => file.endsWith('.test.ts') },
    output: 'dist/src/main.js',
    command: [bin('tsc'), '-p', 'tsconfig.build.json'],
  },
  {
    name: 'web',
    what: 'the web console (Vite into dist/web)',
    sources: { dirs: ['web'], files: ['package-lock.json'], skip: () => false },
    output: 'dist/web/index.html',
    command: [bin('vite'), 'build', 'web', '--logLevel', 'warn'],
  },
  {
    name: 'pglite-seed',
    what: "the embedded database's empty seed (dist/pglite-seed.tar.gz)",
    sources: { dirs: [], files: ['package-lock.json', 'scripts/make-pglite-seed.mjs'], skip: () => false },
    output: 'dist/pglite-seed.tar.gz',
    command: [process.execPath, path.join(ROOT, 'scripts', 'make-pglite-seed.mjs')],
  },
];

function stampOf(part) {
  const file = path.join(STAMPS, part.name);
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : null;
}

const ifStale = process.argv.includes('--if-stale');
const started = Date.now();
let built = 0;
for (const part of PARTS) {
  const hash = sourceHash(ROOT, part.sources);
  if (ifStale && existsSync(path.join(ROOT, part.output)) && stampOf(part) === hash) continue;
  const why = !existsSync(path.join(ROOT, part.output)) ? 'not built yet' : ifStale ? 'its sources changed' : 'npm run build';
  process.stderr.write(`Building ${part.what}: ${why}...\n`);
  const [command, ...args] = part.command;
  const result = spawnSync(command, args, { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) {
    process.stderr.write(`Building ${part.what} failed${result.error ? `: ${result.error.message}` : ''}; nothing was started.\n`);
    process.exit(result.status || 1);
  }
  mkdirSync(STAMPS, { recursive: true });
  writeFileSync(path.join(STAMPS, part.name), `${hash}\n`);
  built += 1;
}
if (built > 0) process.stderr.write(`Built in ${((Date.now() - started) / 1000).toFixed(1)} s.\n`);
