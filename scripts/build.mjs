// Builds what `npm start` runs: the server (TypeScript → dist/src, dist/migrations) and the web console
// (Vite → dist/web). `--if-stale` (what `npm start` passes) builds only the parts whose sources changed
// since their last build here, so an unchanged tree starts at once instead of re-running both tools.
// A part's sources are hashed, not dated: a checkout or a copy that keeps old dates is still seen.
// Plain JavaScript, no dependencies: it runs before anything is compiled.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

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
];

function sourceHash({ dirs, files, skip }) {
  const all = [...files];
  for (const dir of dirs) {
    for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })) {
      const file = path.relative(ROOT, path.join(entry.parentPath, entry.name));
      if (entry.isFile() && !skip(file)) all.push(file);
    }
  }
  const hash = createHash('sha256');
  for (const file of all.sort()) hash.update(file).update('\0').update(readFileSync(path.join(ROOT, file))).update('\0');
  return hash.digest('hex');
}

function stampOf(part) {
  const file = path.join(STAMPS, part.name);
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : null;
}

const ifStale = process.argv.includes('--if-stale');
const started = Date.now();
let built = 0;
for (const part of PARTS) {
  const hash = sourceHash(part.sources);
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
