// How the smoke test starts the product: the Dockerfile's command and environment (read from the
// Dockerfile itself, so the two cannot drift apart), in the production folder, as an unprivileged user
// when it runs as root (the image runs as `node`; here `nobody`, with the home directory its passwd
// entry names, as Docker sets HOME for USER). Each process's output goes to a log file of its own.
import { execFileSync, spawn } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** The final stage's ENV (with its line continuations) and CMD of a Dockerfile. */
export function dockerfileRuntime(file) {
  const lines = readFileSync(file, 'utf8').replace(/\\\n/g, ' ').split('\n');
  const finalStage = lines.slice(lines.findLastIndex((line) => /^FROM\s/i.test(line)));
  const env = {};
  for (const line of finalStage.filter((l) => /^ENV\s/i.test(l))) {
    for (const [, key, value] of line.replace(/^ENV\s+/i, '').matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S*)/g)) env[key] = value.replace(/^"|"$/g, '');
  }
  const cmd = finalStage.find((l) => /^CMD\s/i.test(l));
  if (!cmd) throw new Error(`${file} has no CMD in its final stage`);
  return { env, command: JSON.parse(cmd.replace(/^CMD\s+/i, '')) };
}

/** A compose service's `command: [...]` (the JSON form), e.g. the call-status service's. */
export function composeCommand(file, service) {
  const text = readFileSync(file, 'utf8');
  const block = text.slice(text.indexOf(`\n  ${service}:\n`));
  const match = /\n {4}command: (\[.*\])\n/.exec(block.slice(0, block.indexOf('\n\n')));
  if (!match) throw new Error(`${file}: no command: [...] for ${service}`);
  return JSON.parse(match[1]);
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** The user the product runs as: `nobody` when this runs as root, else whoever runs it. */
export function runAsUser() {
  if (process.getuid?.() !== 0) return { name: execFileSync('id', ['-un']).toString().trim(), home: process.env.HOME ?? '/', wrap: [] };
  const [name, , uid, gid, , home] = execFileSync('getent', ['passwd', 'nobody']).toString().trim().split(':');
  return { name, uid: Number(uid), gid: Number(gid), home, wrap: ['setpriv', `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--'] };
}

/**
 * Starts `command` in `cwd` as `user` with exactly `env` (plus PATH and HOME, as a container has);
 * resolves once started. `exited` settles with the exit code; `stop()` sends SIGTERM and waits.
 */
export function startProcess({ name, command, cwd, env, user, logFile }) {
  const [file, ...args] = [...user.wrap, ...command];
  const log = createWriteStream(logFile);
  const child = spawn(file, args, { cwd, env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: user.home, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  // After the process's output has reached its log file ('close' follows the end of its streams; the
  // log's 'finish' its last write), so a failure's report shows the process's last words.
  const logged = new Promise((resolve) => log.once('finish', resolve));
  const exited = new Promise((resolve) => child.once('close', (code, signal) => resolve(code ?? signal))).then(async (end) => (await logged, end));
  return {
    name,
    logFile,
    exited,
    running: () => child.exitCode === null && child.signalCode === null,
    /** How it ended, for a report: "exit code 1" or "signal SIGTERM" (null while it runs). */
    ending: () => (child.signalCode ? `signal ${child.signalCode}` : child.exitCode !== null ? `exit code ${child.exitCode}` : null),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** The last `count` lines of a log file, for a failure's report. */
export function tail(file, count = 40) {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-count).join('\n');
  } catch {
    return '(no log)';
  }
}
