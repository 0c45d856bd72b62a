// The production smoke test (deploy/smoke.sh runs it on a folder made by deploy/production-tree.sh):
// the server and the call-status service started with the Dockerfile's and docker-compose.yml's own
// commands and environment, as an unprivileged user, then used as a person would. Then the server once
// more with the PTY library's binary package deleted: it must start, and refuse only the terminal.
// Usage: node deploy/smoke/smoke.mjs APP_DIR WORK_DIR
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkCallStart, checkConsole, checkTerminal, expectStatus, request, startWled, waitFor } from './checks.mjs';
import { composeCommand, dockerfileRuntime, freePort, runAsUser, startProcess, tail } from './processes.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const [appDir, workDir] = process.argv.slice(2).map((p) => path.resolve(p));
if (!appDir || !workDir || !existsSync(path.join(appDir, 'dist/src/main.js'))) {
  console.error('usage: node deploy/smoke/smoke.mjs APP_DIR WORK_DIR (APP_DIR made by deploy/production-tree.sh)');
  process.exit(2);
}

const user = runAsUser();
const image = dockerfileRuntime(path.join(ROOT, 'Dockerfile'));
const dataDir = path.join(workDir, 'data');
mkdirSync(dataDir, { recursive: true });
if (user.uid !== undefined) chownSync(dataDir, user.uid, user.gid);
const password = randomBytes(12).toString('base64url');
const callstatusToken = randomBytes(18).toString('base64url');
const [port, callstatusPort] = [await freePort(), await freePort()];
// The image's environment; then what `docker run -e` would set: the data directory and ports of this
// run, loopback only (nothing of a test run listens on the network), and a known admin password.
const env = { ...image.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', ADMIN_PASSWORD: password, CALLSTATUS_PORT: String(callstatusPort), CALLSTATUS_ADMIN_TOKEN: callstatusToken };
const base = `http://127.0.0.1:${port}`;
const running = [];
let failed = false;

async function step(name, run) {
  const started = Date.now();
  try {
    const detail = await run();
    console.log(`✔ ${name}${detail ? `: ${detail}` : ''} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  } catch (err) {
    console.log(`✘ ${name}: ${err.message}`);
    for (const proc of running) console.log(`--- last lines of ${proc.name} (${proc.logFile}) ---\n${tail(proc.logFile)}`);
    failed = true;
    throw err;
  }
}

function start(name, command, extraEnv = {}) {
  const proc = startProcess({ name, command, cwd: appDir, env: { ...env, ...extraEnv }, user, logFile: path.join(workDir, `${name}.log`) });
  running.push(proc);
  return proc;
}

async function startServer(name) {
  const server = start(name, image.command);
  await waitFor(`${name}: /readyz`, async () => (await request(`${base}/readyz`)).status === 200, { process: server, timeoutMs: 120_000 });
  return server;
}

const signIn = async () => expectStatus(await request(`${base}/api/v1/auth/login`, { method: 'POST', body: { username: 'admin', password } }), 200, 'sign in').json.token;

try {
  console.log(`Production smoke test: ${appDir}, as user ${user.name}, command ${image.command.join(' ')}`);
  let server;
  await step('server starts with the image command and answers /readyz', async () => {
    server = await startServer('server');
    return `${base}, ${JSON.stringify((await request(`${base}/readyz`)).json)}`;
  });
  await step('the console page and its script are served', () => checkConsole(base));
  let token;
  await step('admin signs in', async () => {
    token = await signIn();
    return 'token received';
  });
  await step('a web-terminal session runs echo', () => checkTerminal(appDir, base, token));
  await step('the reference agent (dist/) registers, heartbeats and answers exec', async () => {
    const key = expectStatus(await request(`${base}/api/v1/apikeys`, { method: 'POST', token, body: { name: 'smoke agent', permissions: 'agent' } }), 201, 'create an agent key').json.key;
    const agentDir = path.join(workDir, 'agent');
    mkdirSync(agentDir, { recursive: true });
    if (user.uid !== undefined) chownSync(agentDir, user.uid, user.gid);
    const agent = start('agent', ['node', 'dist/src/agent/main.js', '--server', base, '--name', 'smoke-agent', '--interval', '5', '--state', path.join(agentDir, 'state.json')], { RMM_AGENT_KEY: key });
    const listed = await waitFor('the agent registered with a heartbeat', async () => {
      const agents = (await request(`${base}/api/v1/agents?limit=100`, { token })).json;
      return (Array.isArray(agents) ? agents : agents?.items ?? []).find((a) => a.hostname && a.last_heartbeat && a.status === 'online');
    }, { process: agent });
    const answer = await waitFor('exec answered', async () => {
      const res = await request(`${base}/api/v1/agents/${listed.id}/exec`, { method: 'POST', token, body: { command: 'echo agent-$((6*7))', timeout: 10 } });
      return res.status === 200 ? res.json : undefined;
    }, { process: agent, timeoutMs: 30_000 });
    if (answer.exit_code !== 0 || answer.stdout.trim() !== 'agent-42') throw new Error(`exec answered ${JSON.stringify(answer)}`);
    await agent.stop();
    return `agent ${listed.id} (${listed.hostname}), exec stdout "${answer.stdout.trim()}"`;
  });
  await step('the call-status service starts with the compose command and answers a call start', async () => {
    const callstatus = start('callstatus', composeCommand(path.join(ROOT, 'docker-compose.yml'), 'callstatus'));
    const cs = `http://127.0.0.1:${callstatusPort}`;
    await waitFor('call-status: GET /', async () => (await request(`${cs}/`)).status === 200, { process: callstatus, timeoutMs: 120_000 });
    const wled = await startWled();
    const answer = await checkCallStart(cs, callstatusToken, wled).finally(() => wled.close());
    const code = await callstatus.stop();
    if (code !== 0) throw new Error(`call-status exited with ${code} on SIGTERM`);
    return answer;
  });
  await step('the server stops on SIGTERM with exit code 0', async () => {
    const code = await server.stop();
    if (code !== 0) throw new Error(`exit code ${code}`);
  });
  await step('without the PTY binary package the server starts, and only the terminal answers 503', async () => {
    const binary = path.join(appDir, 'node_modules/@lydell', `node-pty-${process.platform}-${process.arch}`);
    if (!existsSync(binary)) throw new Error(`${binary} is not in the production folder`);
    rmSync(binary, { recursive: true });
    server = await startServer('server-without-pty');
    const log = readFileSync(server.logFile, 'utf8').split('\n').filter((line) => line.includes('terminal unavailable'));
    if (log.length !== 1) throw new Error(`${log.length} log lines say "terminal unavailable", expected 1`);
    const again = await signIn();
    const terminal = await request(`${base}/api/v1/terminal`, { token: again });
    if (terminal.status !== 503 || terminal.json?.code !== 'TERMINAL_UNAVAILABLE') throw new Error(`the terminal answered ${terminal.status} ${terminal.text}`);
    expectStatus(await request(`${base}/api/v1/agents`, { token: again }), 200, 'GET /api/v1/agents');
    return `${terminal.status} "${terminal.json.error.slice(0, 90)}…"`;
  });
} catch {
  // reported by its step
} finally {
  await Promise.all(running.map((proc) => proc.stop()));
}
console.log(failed ? 'Production smoke test FAILED' : 'Production smoke test passed');
process.exit(failed ? 1 : 0);
