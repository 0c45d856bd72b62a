// Parts of a benchmark that need a process of their own (a server under test, the simulated fleet: each
// end of 10,000 sockets needs its own file-descriptor budget and its own CPU account) are forked and
// driven over the IPC channel: call(method, params) in the benchmark runs the child's handler.
import { fork, type ChildProcess } from 'node:child_process';

const RPC_FLAG = '--bench-rpc-child';

type Handler = (params: never) => unknown;
interface Request {
  id: number;
  method: string;
  params: unknown;
}
type Reply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string };

export interface RpcChild {
  readonly pid: number | undefined;
  call<T>(method: string, params?: unknown): Promise<T>;
  /** Calls `stop` (when the child has one), then waits for the exit; kills it after `graceMs`. */
  close(graceMs?: number): Promise<void>;
}

/** Forks `file` (under tsx, like this process) with extra Node flags, e.g. `--expose-gc`, and variables added to this process's environment. */
export function forkRpc(file: string, nodeFlags: string[] = [], env: Readonly<Record<string, string>> = {}): RpcChild {
  const child: ChildProcess = fork(file, [RPC_FLAG], { stdio: 'inherit', execArgv: [...process.execArgv, ...nodeFlags], env: { ...process.env, ...env } });
  const pending = new Map<number, { resolve(value: unknown): void; reject(err: Error): void }>();
  let nextId = 1;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      for (const p of pending.values()) p.reject(new Error(`${file} exited (${signal ?? code}) before answering`));
      pending.clear();
      resolve();
    });
  });
  child.on('message', (reply: Reply) => {
    const p = pending.get(reply.id);
    if (!p) return;
    pending.delete(reply.id);
    if (reply.ok) p.resolve(reply.result);
    else p.reject(new Error(reply.error));
  });
  const call = <T>(method: string, params?: unknown) =>
    new Promise<T>((resolve, reject) => {
      if (child.exitCode !== null || child.signalCode !== null) return reject(new Error(`${file} is not running`));
      const id = nextId++;
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      child.send({ id, method, params } satisfies Request);
    });
  return {
    pid: child.pid,
    call,
    async close(graceMs = 30_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await call('stop').catch(() => undefined);
      // Gone already (killed after the grace period, or it ended itself): disconnecting again would throw
      // and lose the table of a run that failed (seen on a fleet that did not connect in time).
      if (child.connected) child.disconnect();
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * In the child: answers the parent's calls with `handlers` when this process was started by forkRpc.
 * A `stop` handler, when given, runs before the channel closes.
 */
export function serveRpcWhenForked(handlers: Record<string, Handler>): void {
  if (!process.argv.includes(RPC_FLAG) || !process.send) return;
  process.on('message', (request: Request) => {
    const reply = (message: Reply) => process.send?.(message);
    const handler = handlers[request.method];
    if (!handler) {
      if (request.method === 'stop') return reply({ id: request.id, ok: true, result: null });
      return reply({ id: request.id, ok: false, error: `no method ${request.method}` });
    }
    Promise.resolve()
      .then(() => handler(request.params as never))
      .then(
        (result) => reply({ id: request.id, ok: true, result: result ?? null }),
        (err: unknown) => reply({ id: request.id, ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
      );
  });
  // The parent went away (or closed the channel after `stop`): nothing left to serve.
  process.on('disconnect', () => process.exit(0));
}
