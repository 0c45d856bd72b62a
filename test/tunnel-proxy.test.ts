// Sessions through `/api/v1/proxy/{tunnel_id}` (contract §8) and through `npm run cli -- tunnel
// connect`'s local port: the same bytes arrive as through the proxy port, refusals happen before the
// upgrade in the contract's error body (also for anyone but the tunnel's opener), and the socket follows
// its session's end.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket, { createWebSocketStream } from 'ws';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveAgent, type LiveServer } from './helpers/live-agent.js';
import { otherAccount, tryAs, type OtherAccount } from './helpers/other-account.js';
import { nodeArgs } from './helpers/spawn-server.js';
import { connect, exchange, MiB, openTunnel, sha, tunnelsOf, TunnelTargets, type TunnelDto } from './helpers/tunnels.js';

let s: LiveServer;
let token: string;
let writeKey: string;
let agent: LiveAgent;
let echo: TunnelDto;
/** The same echo target, opened by the signed-in admin (a tunnel serves only its opener). */
let echoByUser: TunnelDto;
const keys: Record<'read' | 'agent' | 'otherCustomerWrite' | 'ownCustomerWrite', string> = { read: '', agent: '', otherCustomerWrite: '', ownCustomerWrite: '' };
const targets = new TunnelTargets();
const children = new Set<ChildProcess>();

const proxyUrl = (tunnelId: string) => `${s.url.replace('http:', 'ws:')}/api/v1/proxy/${tunnelId}`;

/** Opens the proxy socket; resolves with it once open, or rejects with the refusal's status and body. */
function openProxy(tunnelId: string, headers: Record<string, string>, query = ''): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(proxyUrl(tunnelId) + query, { headers });
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode, body: JSON.parse(body) as unknown })));
    });
    ws.once('error', reject);
  });
}

/** Starts the real CLI (`tunnel connect`) and resolves with its local port and its output so far. */
async function startCli(tunnelId: string, env: Record<string, string>): Promise<{ port: number; output: () => string; stop: () => Promise<number | null> }> {
  // Node itself on the compiled CLI, not the tsx binary: that one relays Ctrl-C to its child and kills
  // it (exit 130) when the child does not confirm within 30 ms, which a busy machine misses now and then.
  const child = spawn(process.execPath, [...nodeArgs('src/cli.ts'), 'tunnel', 'connect', '--server', s.url, '--tunnel', tunnelId, '--listen', '127.0.0.1:0'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const port = await vi.waitFor(
    () => {
      const match = /listening on 127\.0\.0\.1:(\d+)/.exec(output);
      if (!match) throw new Error(`no listening line yet: ${output}`);
      return Number(match[1]);
    },
    { timeout: 20_000, interval: 50 },
  );
  return {
    port,
    output: () => output,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', (code) => {
          children.delete(child);
          resolve(code);
        });
        child.kill('SIGINT');
      }),
  };
}

beforeAll(async () => {
  s = await startLiveServer({});
  token = await adminToken(s);
  const own = await createCustomer(s.app, token, 'K-PROXY-1');
  const other = await createCustomer(s.app, token, 'K-PROXY-2');
  writeKey = (await createKey(s.app, bearer(token), 'write')).key;
  keys.read = (await createKey(s.app, bearer(token), 'read')).key;
  keys.agent = (await createKey(s.app, bearer(token), 'agent', own.id)).key;
  keys.ownCustomerWrite = (await createKey(s.app, bearer(token), 'write', own.id)).key;
  keys.otherCustomerWrite = (await createKey(s.app, bearer(token), 'write', other.id)).key;
  agent = await s.startAgent(keys.agent, { name: 'fw-proxy' }); // joins customer K-PROXY-1
  const echoPort = await targets.echo();
  echo = await openTunnel(s, apiKey(writeKey), agent.id, echoPort);
  echoByUser = await openTunnel(s, bearer(token), agent.id, echoPort);
}, 30_000);
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await s?.close();
  await targets.close();
});

describe('the proxy WebSocket', () => {
  it('carries 10 parallel sessions of 8 MiB each to an echo target and back, exactly', async () => {
    expect(echo.proxy_path).toBe(`/api/v1/proxy/${echo.tunnel_id}`);
    const payloads = Array.from({ length: 10 }, () => randomBytes(8 * MiB));
    const echoed = await Promise.all(
      payloads.map(async (p, i) => {
        // Half sign in with a token in the query (browsers cannot set headers), half with a key header.
        const ws = i % 2 ? await openProxy(echoByUser.tunnel_id, {}, `?token=${token}`) : await openProxy(echo.tunnel_id, apiKey(writeKey));
        return exchange(createWebSocketStream(ws), p);
      }),
    );
    echoed.forEach((back, i) => expect(sha(back), `session ${i}`).toBe(sha(payloads[i]!)));
  }, 60_000);

  it('is refused before the upgrade, in the error body, for callers who may not use the tunnel', async () => {
    const refusal = (headers: Record<string, string>, tunnelId = echo.tunnel_id) =>
      openProxy(tunnelId, headers).then(
        (ws) => {
          ws.close();
          return { status: 101, code: 'OPENED' };
        },
        (err: { status: number; body: { code: string; request_id: string } }) => {
          expect(err.body.request_id).toBeTypeOf('string');
          return { status: err.status, code: err.body.code };
        },
      );
    expect(await refusal({})).toEqual({ status: 401, code: 'UNAUTHORIZED' });
    expect(await refusal(apiKey('rmm_not-a-key'))).toEqual({ status: 401, code: 'UNAUTHORIZED' });
    expect(await refusal(apiKey(keys.read))).toEqual({ status: 403, code: 'FORBIDDEN' });
    expect(await refusal(apiKey(keys.agent))).toEqual({ status: 403, code: 'FORBIDDEN' });
    expect(await refusal(apiKey(keys.otherCustomerWrite))).toEqual({ status: 404, code: 'NOT_FOUND' });
    // In scope and allowed to write, but not the tunnel's opener.
    expect(await refusal(apiKey(keys.ownCustomerWrite))).toEqual({ status: 403, code: 'FORBIDDEN' });
    expect(await refusal(bearer(token))).toEqual({ status: 403, code: 'FORBIDDEN' });
    expect(await refusal(apiKey(writeKey), 'ffffffffffffffff')).toEqual({ status: 404, code: 'NOT_FOUND' });
    expect(await refusal(apiKey(writeKey), 'not-hex')).toEqual({ status: 400, code: 'VALIDATION_ERROR' });
    // None of them reached the agent.
    expect((await tunnelsOf(s, apiKey(writeKey), agent.id)).find((t) => t.tunnel_id === echo.tunnel_id)?.sessions).toBe(0);
    expect(await refusal(apiKey(writeKey))).toEqual({ status: 101, code: 'OPENED' });
  });

  it('delivers the target\'s last bytes and then closes when the target closes', async () => {
    const talker = await openTunnel(s, apiKey(writeKey), agent.id, await targets.listen((socket) => socket.end('bye\n')));
    const stream = createWebSocketStream(await openProxy(talker.tunnel_id, apiKey(writeKey)));
    const received: Buffer[] = [];
    stream.on('data', (c: Buffer) => received.push(c));
    await new Promise((resolve) => stream.once('end', resolve));
    expect(Buffer.concat(received).toString()).toBe('bye\n');
  });

  it('closes its socket when the tunnel is deleted', async () => {
    const silent = await openTunnel(s, bearer(token), agent.id, await targets.listen(() => undefined));
    const ws = await openProxy(silent.tunnel_id, bearer(token));
    const closed = new Promise((resolve) => ws.once('close', resolve));
    await vi.waitFor(async () => expect((await tunnelsOf(s, apiKey(writeKey), agent.id)).find((t) => t.tunnel_id === silent.tunnel_id)?.sessions).toBe(1));
    await s.app.inject({ method: 'DELETE', url: `/api/v1/agents/${agent.id}/tunnel/${silent.tunnel_id}`, headers: apiKey(writeKey) });
    await closed;
  });
});

describe('npm run cli -- tunnel connect', () => {
  it('exposes the tunnel as a local port: 10 parallel sessions of 8 MiB come back exactly', async () => {
    const cli = await startCli(echo.tunnel_id, { RMM_API_KEY: writeKey });
    const payloads = Array.from({ length: 10 }, () => randomBytes(8 * MiB));
    const echoed = await Promise.all(payloads.map(async (p) => exchange(await connect(cli.port), p)));
    echoed.forEach((back, i) => expect(sha(back), `session ${i}`).toBe(sha(payloads[i]!)));
    expect(await cli.stop()).toBe(0); // Ctrl-C stops it cleanly
    expect(cli.output()).not.toContain(writeKey); // the key is never printed
  }, 90_000);

  it('reports a refusal with the server\'s reason and closes the local connection', async () => {
    const cli = await startCli(echo.tunnel_id, { RMM_API_KEY: keys.read });
    const local = await connect(cli.port);
    await new Promise((resolve) => local.once('close', resolve));
    await vi.waitFor(() => expect(cli.output()).toMatch(/refused by the server \(403\): FORBIDDEN/));
    await cli.stop();
  }, 30_000);

  const second = otherAccount();
  it.skipIf(typeof second === 'string')(`resets a connection from another account on this machine before asking the server${typeof second === 'string' ? ` (not tried: ${second})` : ''}`, async () => {
    const nobody = second as OtherAccount;
    const cli = await startCli(echo.tunnel_id, { RMM_API_KEY: writeKey });
    expect(await tryAs(nobody, cli.port)).toBe('ECONNRESET');
    await vi.waitFor(() => expect(cli.output()).toContain(`refused (uid ${nobody.uid}): the connecting socket belongs to another account on this machine`));
    expect(cli.output()).not.toContain('session open');
    const data = randomBytes(64 * 1024);
    expect(sha(await exchange(await connect(cli.port), data))).toBe(sha(data)); // the technician's own programs still get through
    expect(await cli.stop()).toBe(0);
  }, 30_000);
});
