// The server as users run it: the built output (dist/src/main.js, made by `node scripts/build.mjs
// --if-stale` as `npm start` does) with the production Node flags, in a process of its own, at the
// production log level. For figures of the default install (memory above all): tsx keeps every source
// and its transform in memory, so a server run from the sources is bigger than the one users run.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { SERVER_NODE_ENV, SERVER_NODE_FLAGS } from '../../src/platform/node-flags.js';
import { stopChild } from './cluster-processes.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface BuiltServer {
  child: ChildProcess;
  /** http://127.0.0.1:<port> */
  url: string;
  /** Milliseconds from the spawn to the log line saying it listens. */
  startMs: number;
  stop(): Promise<void>;
}

/** Builds dist/ when its sources changed (the same step as `npm start`); throws with the build's output when it fails. */
export function buildIfStale(): void {
  const build = spawnSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: ROOT, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`the build failed: ${build.stdout}${build.stderr}`);
}

/** Starts dist/src/main.js with `env` (DATA_DIR and the like); resolves once it listens. `spawned` sees the process at once. */
export async function startBuiltServer(env: Record<string, string>, spawned?: (child: ChildProcess) => void): Promise<BuiltServer> {
  const base = { ...process.env };
  delete base.DATABASE_URL;
  const serverEnv = { ...base, ...SERVER_NODE_ENV, NODE_ENV: 'production', HOST: '127.0.0.1', PORT: '0', CALLSTATUS_PORT: '0', LOG_LEVEL: 'info', ...env };
  return startListening([...SERVER_NODE_FLAGS, 'dist/src/main.js'], serverEnv, spawned);
}

/**
 * The bare stand-in (bare-agent-server.ts) as plain JavaScript under Node alone, for memory baselines:
 * run under tsx, whose loader keeps every source and its transform, it held 205 MiB idle.
 */
export async function startPlainBare(): Promise<BuiltServer> {
  const source = await readFile(path.join(import.meta.dirname, 'bare-agent-server.ts'), 'utf8');
  const code = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
  // Inside the project, so that its imports (fastify, ws) resolve from node_modules.
  const file = path.join(ROOT, 'node_modules/.cache/rmm-bench/bare-agent-server.mjs');
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, code);
  const main = `const bare = await import(${JSON.stringify(pathToFileURL(file).href)}); const s = await bare.startBareAgentServer(); console.log('Server listening at ' + s.url);`;
  return startListening(['--input-type=module', '-e', main], process.env);
}

/** Spawns Node with `args`; resolves once the process logs the address it listens at. */
async function startListening(args: string[], env: NodeJS.ProcessEnv, spawned?: (child: ChildProcess) => void): Promise<BuiltServer> {
  const startedAt = Date.now();
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  spawned?.(child);
  const port = await new Promise<number>((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      // Once listening, the log is still read and dropped (a full pipe would stall the server).
      const match = /Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(line);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`node ${args.at(-1)} exited (${code}) before listening`)));
  });
  return { child, url: `http://127.0.0.1:${port}`, startMs: Date.now() - startedAt, stop: () => stopChild(child, 15_000) };
}

/** Resident memory of `pid` now and its high-water mark so far (VmRSS, VmHWM), in MiB. */
export async function residentMiB(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
}

/** Resident memory of `pid` and of its child processes now, in MiB (a first start fills the database in a child). */
export async function familyResidentMiB(pid: number): Promise<number> {
  const children = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  const pids = [pid, ...children.split(/\s+/).filter(Boolean).map(Number)];
  // A child that has exited but not been reaped has no VmRSS (NaN): it holds nothing.
  const each = await Promise.all(pids.map((p) => residentMiB(p).then((r) => (Number.isNaN(r.rss) ? 0 : r.rss), () => 0)));
  return each.reduce((a, b) => a + b, 0);
}
