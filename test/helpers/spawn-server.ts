// Runs src/main.ts as a real process, the way `npm start` does, for start-up and shutdown tests.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import readline from 'node:readline';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface ServerProcess {
  /** Port it listens on (after `listening` resolved). */
  port: number;
  stdout: string[];
  stderr: string[];
  listening: Promise<void>;
  exited: Promise<number | null>;
  kill(signal: NodeJS.Signals): void;
}

export function spawnServer(env: Record<string, string>): ServerProcess {
  const base = { ...process.env };
  delete base.DATABASE_URL;
  delete base.TEST_DATABASE_URL;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...base, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const proc: ServerProcess = {
    port: 0,
    stdout: [],
    stderr: [],
    listening: Promise.resolve(),
    exited: once(child, 'exit').then(([code]) => code as number | null),
    kill: (signal) => child.kill(signal),
  };
  readline.createInterface({ input: child.stderr }).on('line', (line) => proc.stderr.push(line));
  proc.listening = new Promise((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      proc.stdout.push(line);
      const match = /Server listening at https?:\/\/127\.0\.0\.1:(\d+)/.exec(line);
      if (match) {
        proc.port = Number(match[1]);
        resolve();
      }
    });
    void proc.exited.then((code) => reject(new Error(`server exited (${code}) before listening: ${proc.stdout.join('\n')}`)));
  });
  // Tests that expect an early exit never await `listening`; that must not count as unhandled.
  proc.listening.catch(() => undefined);
  return proc;
}

/** The `msg` fields of the JSON log lines written so far. */
export function messages(proc: ServerProcess): string[] {
  return proc.stdout.flatMap((line) => {
    try {
      return [String((JSON.parse(line) as { msg?: unknown }).msg)];
    } catch {
      return [];
    }
  });
}
