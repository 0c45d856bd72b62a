// The server's Node.js flags (src/platform/node-flags.ts) are in every documented way of starting it,
// and they do what they are there for: a young generation of twice Node's default size.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SERVER_NODE_FLAGS } from '../src/platform/node-flags.js';

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

describe('the server is started with its Node.js flags', () => {
  const commands = {
    'npm start': (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts.start,
    Dockerfile: read('Dockerfile').split('\n').find((line) => line.startsWith('CMD [')) ?? '',
    'the systemd unit (deploy/systemd/rmm.service)': read('deploy/systemd/rmm.service').split('\n').find((line) => line.startsWith('ExecStart=') && line.includes('dist/src/main.js')) ?? '',
  };

  it.each(Object.entries(commands))('%s', (_where, command) => {
    expect(nodeCommandOf(command)).toEqual(expect.arrayContaining([...SERVER_NODE_FLAGS]));
  });

  it('gives the server a young generation twice the size of Node\'s default', () => {
    expect(youngGenerationBytes(SERVER_NODE_FLAGS)).toBe(2 * youngGenerationBytes([]));
  });
});
