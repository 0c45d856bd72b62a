// Parent side of a load run: forks the load client, hands it the plan, and measures this process (the
// server's) event-loop utilisation and CPU over the same window the client measures.
import { fork } from 'node:child_process';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { CHILD_FLAG, type ClientMessage, type LoadRequest, type LoadResult } from './load-client.js';

export type { LoadRequest } from './load-client.js';

export interface Measurement extends LoadResult {
  /** Share of the window the server's event loop was busy (1.0 = saturated). */
  serverElu: number;
  /** CPU seconds of the server process per wall-clock second (main thread, GC and libuv threads). */
  serverCpu: number;
}

const CLIENT_FILE = fileURLToPath(new URL('./load-client.ts', import.meta.url));

export function measure(request: LoadRequest): Promise<Measurement> {
  return new Promise((resolve, reject) => {
    // fork() passes on process.execArgv, so the child runs under tsx too.
    const child = fork(CLIENT_FILE, [CHILD_FLAG], { stdio: 'inherit' });
    let elu: EventLoopUtilization | undefined;
    let cpu: NodeJS.CpuUsage | undefined;
    let windowStart = 0;
    let settled = false;
    const finish = (err: Error | undefined, result?: LoadResult) => {
      if (settled) return;
      settled = true;
      if (err || !result) return reject(err ?? new Error('no result'));
      const wallMs = performance.now() - windowStart;
      const used = process.cpuUsage(cpu);
      resolve({
        ...result,
        serverElu: elu ? performance.eventLoopUtilization(elu).utilization : Number.NaN,
        serverCpu: (used.user + used.system) / 1000 / wallMs,
      });
    };
    child.on('message', (m: ClientMessage) => {
      if (m.type === 'measuring') {
        elu = performance.eventLoopUtilization();
        cpu = process.cpuUsage();
        windowStart = performance.now();
      } else if (m.type === 'done') finish(undefined, m.result);
      else finish(new Error(`load client failed: ${m.error}`));
    });
    child.on('error', (err) => finish(err));
    child.on('exit', (code) => finish(new Error(`load client exited with ${code} before reporting`)));
    child.send(request);
  });
}
