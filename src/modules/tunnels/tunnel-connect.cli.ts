// `npm run cli -- tunnel connect --server URL --tunnel ID --listen 127.0.0.1:PORT`: exposes a tunnel's
// proxy WebSocket as a local port until interrupted, so a technician reaches the tunnel from their own
// machine without any proxy port being open to them. It talks to a server over HTTP(S) like any API
// client and needs no database or server configuration.
import { parseOptions, requireServer, UsageError } from '../../agent/cli-args.js';
import { exposeTunnel, type TunnelClientOptions } from './tunnel-client.js';

export const TUNNEL_CONNECT_USAGE = 'tunnel connect --server URL --tunnel ID --listen ADDR';

export const TUNNEL_CONNECT_HELP = `usage: npm run cli -- ${TUNNEL_CONNECT_USAGE} [--key KEY | --token JWT]

  --server URL      the RMM server, e.g. https://rmm.example.net
  --tunnel ID       tunnel_id from POST /agents/{id}/tunnel
  --listen ADDR     local address, e.g. 127.0.0.1:15900 (default host 127.0.0.1; port 0 picks one)
  --key KEY         the write or admin API key that opened the tunnel (or environment variable RMM_API_KEY)
  --token JWT       or the access token of the user who opened it (or environment variable RMM_TOKEN)

This is the way to reach a tunnel from another machine without opening any port: it needs only
HTTPS to the server. Every connection to the local port is one session through the tunnel, over the
server's WebSocket /api/v1/proxy/{tunnel_id}. A tunnel serves only the user or key that opened it
(anyone else is refused with 403). If the server cuts a session (its client stopped reading and the
agent cannot pause it), the local connection is reset, never ended as if the stream were complete.
On Linux the local port serves only programs of your own account (others are reset); on other
systems any program on this machine that reaches it.
Prefer the environment variables: arguments are visible to other users of the machine.`;

export function parseTunnelConnectArgs(argv: string[], env: NodeJS.ProcessEnv): TunnelClientOptions {
  const values = parseOptions(argv, { server: { type: 'string' }, tunnel: { type: 'string' }, listen: { type: 'string' }, key: { type: 'string' }, token: { type: 'string' } });
  const { tunnel, listen } = values;
  const server = requireServer(values.server);
  if (!tunnel || !listen) throw new UsageError('--tunnel and --listen are required');
  if (!/^[0-9a-f]{1,64}$/.test(tunnel)) throw new UsageError('--tunnel must be a tunnel id (hex)');
  const apiKey = values.key ?? env.RMM_API_KEY;
  const token = values.token ?? env.RMM_TOKEN;
  if (!apiKey && !token) throw new UsageError('credentials are required: --key or RMM_API_KEY, or --token or RMM_TOKEN');
  return { serverUrl: server, tunnelId: tunnel, listen: parseListen(listen), credentials: apiKey ? { apiKey } : { token: token! } };
}

/** `PORT`, `HOST:PORT` or `[IPv6]:PORT`. */
function parseListen(value: string): { host: string; port: number } {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):(\d+)$/.exec(value) ?? /^()()(\d+)$/.exec(value);
  const port = Number(match?.[3]);
  if (!match || !Number.isInteger(port) || port > 65_535) throw new UsageError(`--listen must be [HOST:]PORT, got ${value}`);
  return { host: match[1] || match[2] || '127.0.0.1', port };
}

/** Runs until SIGINT or SIGTERM; returns the exit code. */
export async function runTunnelConnect(argv: string[], env: NodeJS.ProcessEnv, out: (line: string) => void): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    out(TUNNEL_CONNECT_HELP);
    return 0;
  }
  let options: TunnelClientOptions;
  try {
    options = parseTunnelConnectArgs(argv, env);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`${err.message}\n\n${TUNNEL_CONNECT_HELP}`);
    return 2;
  }
  const client = await exposeTunnel({ ...options, report: out });
  out(`listening on ${client.address.host}:${client.address.port}; each connection goes through tunnel ${options.tunnelId} (Ctrl-C stops)`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await client.close();
  return 0;
}
