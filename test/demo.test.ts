// `npm run demo` as a newcomer runs it (issue 14): a real process that starts the server on the embedded
// database, prints the address and the sign-in, has its simulated agents online, and on Ctrl-C stops
// everything and deletes its data. The demo always uses the embedded database, so the PostgreSQL pass
// skips it.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { describe, expect, it } from 'vitest';
import { childEnv, ROOT } from './helpers/spawn-server.js';

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe.skipIf(Boolean(process.env.TEST_DATABASE_URL))('npm run demo', () => {
  it('starts the server with simulated agents online, prints how to sign in, and cleans up on Ctrl-C', async () => {
    const port = await freePort();
    const demo = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/demo/main.ts')], {
      cwd: ROOT,
      env: childEnv({ DEMO_PORT: String(port), DEMO_AGENTS: '6', DEMO_INTERVAL_S: '2' }),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const printed: string[] = [];
      const lines = readline.createInterface({ input: demo.stdout! });
      await new Promise<void>((resolve, reject) => {
        // A new embedded database (initdb and every migration) through tsx: a minute or more on two slow,
        // busy cores.
        const timer = setTimeout(() => reject(new Error(`no "Stop with Ctrl-C" within 150 s:\n${printed.join('\n')}`)), 150_000);
        lines.on('line', (line) => {
          printed.push(line);
          if (line.startsWith('Stop with Ctrl-C')) {
            clearTimeout(timer);
            resolve();
          }
        });
        demo.once('exit', (code) => reject(new Error(`the demo exited with ${code}:\n${printed.join('\n')}`)));
      });
      const text = printed.join('\n');
      expect(text).toContain('6 simulated agents (6 online), 4 customers');
      expect(text).toContain(`http://127.0.0.1:${port}/`);
      const [, username, password] = /sign in\s+(\S+) \/ (\S+)/.exec(text) ?? [];
      const dataDir = /data\s+(\S+)/.exec(text)?.[1];
      expect(dataDir && existsSync(dataDir)).toBe(true);

      const base = `http://127.0.0.1:${port}/api/v1`;
      const login = await fetch(`${base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }) });
      expect(login.status).toBe(200);
      const { token } = (await login.json()) as { token: string };
      const agents = (await (await fetch(`${base}/agents?status=online`, { headers: { authorization: `Bearer ${token}` } })).json()) as Array<{ customer_id: number | null }>;
      expect(agents).toHaveLength(6);
      expect(agents.every((a) => a.customer_id !== null)).toBe(true);

      const exited = once(demo, 'exit');
      demo.kill('SIGINT');
      const [code] = (await exited) as [number];
      expect(code).toBe(0);
      expect(existsSync(dataDir!)).toBe(false);
    } finally {
      if (demo.exitCode === null) demo.kill('SIGKILL');
    }
  }, 200_000);
});
