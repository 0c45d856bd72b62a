// The server's Node.js flags and environment (src/platform/node-flags.ts) are in every documented way of
// starting it, and they do what they are there for: a young generation of twice Node's default size, and
// memory that malloc freed going back to the system after a large block was freed.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { dockerfileRuntime } from '../deploy/smoke/processes.mjs';
import { SERVER_NODE_ENV, SERVER_NODE_FLAGS } from '../src/platform/node-flags.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** The words of the command that runs the server, up to its script. */
function nodeCommandOf(line: string): string[] {
  const words = line.match(/node[^\n]*?dist\/src\/main\.js/)?.[0].split(/[\s",[\]]+/).filter(Boolean);
  if (!words) throw new Error(`no command running dist/src/main.js in: ${line}`);
  return words;
}

/** The young generation's size after allocating long enough for it to reach its largest. */
function youngGenerationBytes(flags: readonly string[]): number {
  const script =
    'const kept=[];for(let i=0;i<3e6;i++){kept.push({i});if(kept.length>4e5)kept.length=0}' +
    "process.stdout.write(String(require('v8').getHeapSpaceStatistics().find(s=>s.space_name==='new_space').space_size))";
  const run = spawnSync(process.execPath, [...flags, '-e', script], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`node ${flags.join(' ')} failed: ${run.stderr}`);
  return Number(run.stdout);
}

/**
 * Resident MiB a Node process still holds after it freed an 8 MiB block and then 199 blocks of 1 MiB,
 * the last one allocated kept (a live block above the freed ones stops malloc trimming its heap).
 */
function keptAfterFreeing(env: Record<string, string>): number {
  const script = `
    const { setTimeout: delay } = require('node:timers/promises');
    const rss = () => process.memoryUsage.rss() / 1048576;
    const collect = async () => { for (let i = 0; i < 3; i++) { gc(); await delay(50); } };
    (async () => {
      await collect();
      const before = rss();
      let big = Buffer.alloc(8 * 1048576, 1); big = null; await collect();
      const blocks = [];
      for (let i = 0; i < 200; i++) blocks.push(Buffer.alloc(1048576, 1));
      globalThis.kept = blocks.pop();
      blocks.length = 0; await collect();
      process.stdout.write(String(rss() - before));
    })();`;
  // glibc's own default when `env` names none: malloc settings this process was started with are not passed on.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('MALLOC_') && name !== 'GLIBC_TUNABLES'));
  const run = spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8', env: { ...inherited, ...env } });
  if (run.status !== 0) throw new Error(`node failed: ${run.stderr}`);
  return Number(run.stdout);
}

const glibc = Boolean((process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime);

describe('the server is started with its Node.js flags and environment', () => {
  const commands = {
    'npm start': (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts.start,
    Dockerfile: read('Dockerfile').split('\n').find((line) => line.startsWith('CMD [')) ?? '',
    'the systemd unit (deploy/systemd/rmm.service)': read('deploy/systemd/rmm.service').split('\n').find((line) => line.startsWith('ExecStart=') && line.includes('dist/src/main.js')) ?? '',
  };

  it.each(Object.entries(commands))('%s', (_where, command) => {
    expect(nodeCommandOf(command)).toEqual(expect.arrayContaining([...SERVER_NODE_FLAGS]));
  });

  const environments = {
    'npm start': Object.fromEntries([...commands['npm start'].matchAll(/(?:^|&&\s*)((?:[A-Z_]+=\S+\s+)+)node /g)].flatMap((m) => m[1]!.trim().split(/\s+/).map((pair) => pair.split('=')))),
    Dockerfile: dockerfileRuntime(path.join(ROOT, 'Dockerfile')).env,
    'the systemd unit (deploy/systemd/rmm.service)': Object.fromEntries(
      read('deploy/systemd/rmm.service').split('\n').filter((line) => line.startsWith('Environment=')).map((line) => line.slice('Environment='.length).split('=')),
    ),
  };

  it.each(Object.entries(environments))('%s sets the environment', (_where, env) => {
    expect(env).toMatchObject(SERVER_NODE_ENV);
  });

  it.skipIf(!glibc)('gives freed memory back to the system after a large block was freed, which glibc\'s default keeps', () => {
    expect(keptAfterFreeing({})).toBeGreaterThan(150);
    expect(keptAfterFreeing({ ...SERVER_NODE_ENV })).toBeLessThan(30);
  });

  it('gives the server a young generation twice the size of Node\'s default', () => {
    expect(youngGenerationBytes(SERVER_NODE_FLAGS)).toBe(2 * youngGenerationBytes([]));
  });
});
