// The two ends of tunnel traffic, on a worker thread of their own: a TCP echo server (the tunnel's
// target, and the direct baseline's peer) and echo clients that send N bytes while reading them back.
// On their own thread they do not share the event loop with the server under test, as the technician's
// machine and the customer's device would not. Used by tunnel-throughput.ts through startEchoLoad().
import { randomBytes } from 'node:crypto';
import net, { type AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { isMainThread, parentPort, Worker } from 'node:worker_threads';

const MiB = 1024 * 1024;
const WRITE_CHUNK = 64 * 1024;
/** What every connection sends, repeated; random so nothing on the way can shortcut it. */
const PATTERN = randomBytes(WRITE_CHUNK);

interface LoadRequest {
  port: number;
  bytes: number;
  sessions: number;
}
type LoadAnswer = { mibPerSecond: number } | { error: string };

export interface EchoLoad {
  /** Port of the echo server. */
  echoPort: number;
  /** MiB/s of `sessions` parallel echo connections to `port` sharing `bytes`. */
  throughput(port: number, bytes: number, sessions: number): Promise<number>;
  close(): Promise<void>;
}

/** Starts the worker (this file, loaded through tsx) and waits for its echo server. */
export async function startEchoLoad(): Promise<EchoLoad> {
  const self = new URL(import.meta.url).href;
  const worker = new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(self)}); });`, { eval: true });
  const echoPort = await new Promise<number>((resolve, reject) => {
    worker.once('message', (m: { echoPort: number }) => resolve(m.echoPort));
    worker.once('error', reject);
  });
  return {
    echoPort,
    throughput: (port, bytes, sessions) =>
      new Promise((resolve, reject) => {
        worker.once('message', (answer: LoadAnswer) => ('error' in answer ? reject(new Error(answer.error)) : resolve(answer.mibPerSecond)));
        worker.postMessage({ port, bytes, sessions } satisfies LoadRequest);
      }),
    close: async () => void (await worker.terminate()),
  };
}

/** Checks that the echo is the pattern, repeated, from the first byte on (memcmp per chunk, cheap). */
function patternChecker(): (chunk: Buffer) => void {
  let position = 0;
  return (chunk) => {
    for (let offset = 0; offset < chunk.length; ) {
      const length = Math.min(chunk.length - offset, PATTERN.length - position);
      if (!chunk.subarray(offset, offset + length).equals(PATTERN.subarray(position, position + length))) {
        throw new Error('the echo differs from the bytes sent');
      }
      offset += length;
      position = (position + length) % PATTERN.length;
    }
  };
}

/** Sends `bytes` to 127.0.0.1:port while reading the echo; resolves once all of it came back intact. */
function echoThrough(port: number, bytes: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    const check = patternChecker();
    let sent = 0;
    let received = 0;
    const fail = (err: Error) => {
      socket.destroy();
      reject(err);
    };
    const send = () => {
      while (sent < bytes) {
        const chunk = PATTERN.subarray(0, Math.min(WRITE_CHUNK, bytes - sent));
        sent += chunk.length;
        if (!socket.write(chunk)) return void socket.once('drain', send);
      }
    };
    socket.on('data', (chunk: Buffer) => {
      try {
        check(chunk);
      } catch (err) {
        return fail(err as Error);
      }
      received += chunk.length;
      if (received < bytes) return;
      socket.end();
      resolve();
    });
    socket.on('error', fail);
    socket.on('close', () => {
      if (received < bytes) fail(new Error(`connection closed after ${received} of ${bytes} bytes echoed`));
    });
    socket.once('connect', send);
  });
}

function runWorker(port: NonNullable<typeof parentPort>): void {
  const server = net.createServer((socket) => {
    socket.on('error', () => socket.destroy());
    socket.pipe(socket); // TCP's own backpressure
  });
  server.listen({ port: 0, host: '127.0.0.1' }, () => port.postMessage({ echoPort: (server.address() as AddressInfo).port }));
  port.on('message', (request: LoadRequest) => {
    const each = Math.floor(request.bytes / request.sessions);
    const started = performance.now();
    Promise.all(Array.from({ length: request.sessions }, () => echoThrough(request.port, each))).then(
      () => port.postMessage({ mibPerSecond: (each * request.sessions) / MiB / ((performance.now() - started) / 1000) } satisfies LoadAnswer),
      (err: Error) => port.postMessage({ error: err.message } satisfies LoadAnswer),
    );
  });
}

if (!isMainThread && parentPort) runWorker(parentPort);
