// `npm run bench`: runs every benchmark in bench/*.ts (each exports `name` and `run(): Promise<BenchRow[]>`)
// one after another in this process and prints one table; `npm run bench -- alerting socket-storm` runs
// only those named (by `name` or file name). Figures are measured, never asserted; the
// exit code is non-zero only when a benchmark's harness itself fails.
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chooseBackends } from './lib/backends.js';
import { formatTable, type BenchRow } from './lib/table.js';

interface Benchmark {
  name: string;
  run(): Promise<BenchRow[]>;
}

const here = path.dirname(fileURLToPath(import.meta.url));

async function benchmarks(): Promise<{ file: string; bench: Benchmark }[]> {
  const files = (await readdir(here)).filter((f) => f.endsWith('.ts') && f !== 'run.ts').sort();
  const found = [];
  for (const file of files) {
    const mod = (await import(pathToFileURL(path.join(here, file)).href)) as Partial<Benchmark>;
    if (typeof mod.run !== 'function' || typeof mod.name !== 'string') throw new Error(`${file}: exports no name/run`);
    found.push({ file, bench: mod as Benchmark });
  }
  return found;
}

async function main(): Promise<void> {
  const rows: BenchRow[] = [];
  let failed = false;
  const started = Date.now();
  const database = (await chooseBackends(process.env)).reason;
  console.error(`database: ${database}`);
  const wanted = process.argv.slice(2);
  const all = await benchmarks();
  const chosen = wanted.length === 0 ? all : all.filter(({ file, bench }) => wanted.includes(bench.name) || wanted.includes(file) || wanted.includes(file.replace(/\.ts$/, '')));
  if (chosen.length === 0) throw new Error(`no benchmark named ${wanted.join(', ')}; there are ${all.map((b) => b.bench.name).join(', ')}`);
  for (const { file, bench } of chosen) {
    try {
      rows.push(...(await bench.run()));
    } catch (err) {
      failed = true;
      console.error(`${file} failed:`, err);
    }
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  console.log(`\nDatabase: ${database}\n\n${formatTable(rows)}\n\n(${seconds} s; ratio = figure ÷ baseline measured in the same run, or, where the benchmark interleaves rounds, the median of the per-pair ratios)`);
  if (failed) process.exitCode = 1;
}

await main();
