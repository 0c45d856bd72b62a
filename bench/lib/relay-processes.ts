// The processes around a relay benchmark (B3 tunnel-throughput, device-files): one `socat` hop whose CPU
// (its forked connection processes included) is the baseline, and the project's reference agent in a
// process of its own, as it runs on a customer's machine.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../test/helpers/free-port.js';
import { pidCpuMs } from './cluster-processes.js';
import { ensureSocat } from './ensure-socat.js';

const message = (err: unknown) => (err instanceof Error ? err.message.split('\n')[0]! : String(err));

/** A relay whose CPU can be read: what one run through it cost, in CPU ms. */
export interface Relay {
  port: number;
  cpuMs(): Promise<number>;
  close(): Promise<void>;
}

/** Stops a child process (SIGINT first, so the agent closes its socket) and waits for it. */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGINT');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** One `socat -b 131072` hop to the target, a process per connection (its `fork` option). */
export async function startSocatHop(targetPort: number, log: (line: string) => void): Promise<Relay> {
  const missing = await ensureSocat(log);
  if (missing) throw new Error(missing);
  const port = await freePort();
  const child = spawn('socat', ['-b', '131072', `TCP-LISTEN:${port},bind=127.0.0.1,reuseaddr,fork`, `TCP:127.0.0.1:${targetPort}`], { stdio: 'ignore' });
  const failed = once(child, 'error').then(([err]) => {
    throw new Error(`socat: ${message(err)} (Debian: apt-get install socat)`);
  });
  for (let i = 0; ; i++) {
    if (i === 50) {
      await stop(child);
      throw new Error('socat did not listen within 5 s');
    }
    const listening = await Promise.race([
      failed,
      new Promise<boolean>((resolve) => {
        const probe = net.connect(port, '127.0.0.1', () => (probe.destroy(), resolve(true)));
        probe.once('error', () => resolve(false));
      }),
    ]);
    if (listening) break;
    await sleep(100);
  }
  return { port, cpuMs: () => reapedCpuMs(child.pid!), close: () => stop(child) };
}

/**
 * The CPU ms of a process that forks one per connection (socat, websockify), its connection processes
 * included: they count once it has reaped them, so this waits (up to 3 s) until none is left.
 */
export async function reapedCpuMs(pid: number): Promise<number> {
  const children = `/proc/${pid}/task/${pid}/children`;
  for (let i = 0; i < 150 && (await readFile(children, 'utf8').catch(() => '')).trim() !== ''; i++) await sleep(20);
  return pidCpuMs(pid, true);
}

/** Starts `npm run agent` against `url` and resolves once it is connected (its id from /hub/status). */
export async function startAgentProcess(url: string, agentKey: string, readKey: string, stateFile: string, name: string): Promise<{ agentId: string; child: ChildProcess }> {
  const args = ['--import', 'tsx', 'src/agent/main.ts', '--server', url, '--name', name, '--state', stateFile, '--platform', 'linux', '--interval', '3600'];
  const child = spawn(process.execPath, args, { env: { ...process.env, RMM_AGENT_KEY: agentKey }, stdio: 'ignore' });
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await sleep(100)) {
    const status = (await (await fetch(`${url}/api/v1/hub/status`, { headers: { 'x-api-key': readKey } })).json()) as { agents: Array<{ agent_id: string; name?: string }> };
    const agentId = status.agents.find((a) => a.name === name)?.agent_id ?? status.agents[0]?.agent_id;
    if (agentId) return { agentId, child };
  }
  await stop(child);
  throw new Error('the reference agent did not connect within 20 s');
}

