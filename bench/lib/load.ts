// Parent side of a load run: forks the load client, hands it the plan, and measures the server's
// event-loop utilisation and CPU over the window the client measures. The server is this process unless
// a sampler of another process is given (a server in a child of its own reports its own CPU, so nothing
// of the benchmark's harness is counted as the server's).
import { fork } from 'node:child_process';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { CHILD_FLAG, type ClientMessage, type LoadRequest, type LoadResult } from './load-client.js';

export type { LoadRequest } from './load-client.js';

/** The server's CPU so far and, when it can tell, its event loop's idle and active time (both ms). */
export interface ServerSample {
  cpuMs: number;
  elu?: Pick<EventLoopUtilization, 'idle' | 'active'>;
}

export interface Measurement extends LoadResult {
  /** Share of the window the server's event loop was busy (1.0 = saturated). */
  serverElu: number;
  /** CPU seconds of the server process per wall-clock second (main thread, GC and libuv threads). */
  serverCpu: number;
  /** The server's CPU (user + system) over the window per request answered in it, in µs. */
  serverCpuUsPerRequest: number;
}

const CLIENT_FILE = fileURLToPath(new URL('./load-client.ts', import.meta.url));

/** This process as the server. */
export const sampleThisProcess = (): Promise<ServerSample> => {
  const { user, system } = process.cpuUsage();
  return Promise.resolve({ cpuMs: (user + system) / 1000, elu: performance.eventLoopUtilization() });
};

export function measure(request: LoadRequest, sampleServer: () => Promise<ServerSample> = sampleThisProcess): Promise<Measurement> {
  return new Promise((resolve, reject) => {
    // fork() passes on process.execArgv, so the child runs under tsx too.
    const child = fork(CLIENT_FILE, [CHILD_FLAG], { stdio: 'inherit' });
    // The samples at the window's two ends, with the wall-clock time each was asked at.
    let from: Promise<[ServerSample, number]> | undefined;
    let to: Promise<[ServerSample, number]> | undefined;
    const sample = () => {
      const at = performance.now();
      return sampleServer().then((s): [ServerSample, number] => [s, at]);
    };
    let settled = false;
    const finish = (err: Error | undefined, result?: LoadResult) => {
      if (settled) return;
      settled = true;
      if (err || !result) return reject(err ?? new Error('no result'));
      if (!from || !to) return reject(new Error('the load client never reported its window'));
      Promise.all([from, to]).then(([[a, atA], [b, atB]]) => {
        const cpuMs = b.cpuMs - a.cpuMs;
        const active = a.elu && b.elu ? b.elu.active - a.elu.active : Number.NaN;
        const idle = a.elu && b.elu ? b.elu.idle - a.elu.idle : Number.NaN;
        resolve({
          ...result,
          serverElu: active / (active + idle),
          serverCpu: cpuMs / (atB - atA),
          serverCpuUsPerRequest: (cpuMs * 1000) / result.completed,
        });
      }, reject);
    };
    child.on('message', (m: ClientMessage) => {
      if (m.type === 'measuring') from = sample();
      else if (m.type === 'measured') to = sample();
      else if (m.type === 'done') finish(undefined, m.result);
      else finish(new Error(`load client failed: ${m.error}`));
    });
    child.on('error', (err) => finish(err));
    child.on('exit', (code) => finish(new Error(`load client exited with ${code} before reporting`)));
    child.send(request);
  });
}
