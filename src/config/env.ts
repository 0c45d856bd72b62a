// Configuration: one zod parse of the environment (contract §13) into a frozen Config.
// Nothing else in the code base reads process.env; later features add their variables here.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { packageRoot } from '../platform/version.js';
import { DEFAULT_HEAP_GROWTH_PERCENT } from '../platform/heap-growth.js';

/** Variables whose values must never be echoed back, not even in a configuration error. */
const SECRET_VARIABLES = new Set(['DATABASE_URL', 'NATS_URL', 'CALLSTATUS_DATABASE_URL', 'JWT_SECRET', 'ENCRYPTION_KEY', 'ADMIN_PASSWORD', 'CALLSTATUS_ADMIN_TOKEN', 'METRICS_TOKEN']);

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const port = (fallback: number) =>
  z
    .string()
    .default(String(fallback))
    .refine((v) => /^\d{1,5}$/.test(v) && Number(v) <= 65535, 'must be an integer from 0 to 65535')
    .transform(Number);

const postgresUrl = z
  .string()
  .refine((v) => /^postgres(ql)?:\/\/.+/.test(v), 'must be a postgres:// or postgresql:// URL')
  .optional();

/**
 * TRUST_PROXY follows Fastify's trustProxy: `true`/`false`, a hop count, or a comma-separated list of
 * addresses/CIDRs of the proxies in front of us.
 */
const trustProxy = z
  .string()
  .default('false')
  .transform((v, ctx): boolean | number | string[] => {
    const value = v.trim().toLowerCase();
    if (value === 'true') return true;
    if (value === 'false') return false;
    if (/^\d+$/.test(value)) return Number(value);
    const list = v.split(',').map((s) => s.trim()).filter(Boolean);
    if (list.length > 0 && list.every((s) => /^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(s))) return list;
    ctx.addIssue({ code: 'custom', message: 'must be true, false, a hop count or a list of proxy addresses' });
    return z.NEVER;
  });

/** TUNNEL_LOCAL_UIDS: `any`, or the user ids (comma-separated) besides the server's own that may use tunnel ports from the server itself. */
const localUids = z
  .string()
  .default('')
  .transform((v) => (v.trim() === 'any' ? 'any' : v.split(',').map((u) => u.trim()).filter(Boolean)))
  .refine((v) => v === 'any' || v.every((u) => /^\d{1,10}$/.test(u) && Number(u) < 2 ** 32), 'must be "any" or a comma-separated list of numeric user ids')
  .transform((v): 'any' | number[] => (v === 'any' ? v : v.map(Number)));

/** A whole number, given as text, from `min` (1 unless said; `minLabel` names it in the error) to `max`. */
function wholeNumber(fallback: string, unit: string, max: number, { min = 1, minLabel = String(min) } = {}) {
  return z
    .string()
    .default(fallback)
    .refine((v) => /^\d{1,12}$/.test(v) && Number(v) >= min && Number(v) <= max, `must be a whole number of ${unit} from ${minLabel} to ${max}`)
    .transform(Number);
}

const envSchema = z
  .object({
    PORT: port(8080),
    HOST: z.string().min(1).default('0.0.0.0'),
    DATABASE_URL: postgresUrl,
    DATA_DIR: z.string().min(1).default('./data'),
    LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
    TLS_CERT_FILE: z.string().min(1).optional(),
    TLS_KEY_FILE: z.string().min(1).optional(),
    TRUST_PROXY: trustProxy,
    MONITOR_INTERVAL_SECONDS: wholeNumber('60', 'seconds', 999_999),
    METRICS_RETENTION_DAYS: wholeNumber('90', 'days', 36_500),
    METRICS_COMPRESS_AFTER_DAYS: wholeNumber('7', 'days', 36_500),
    PGLITE_SHARED_BUFFERS_MB: wholeNumber('16', 'MB', 4096),
    HEAP_GROWTH_PERCENT: wholeNumber(String(DEFAULT_HEAP_GROWTH_PERCENT), 'percent', 400, { min: 0, minLabel: '0 (V8 decides)' }),
    TUNNEL_BIND_ADDRESS: z.string().min(1).default('127.0.0.1'),
    TUNNEL_PORT_MIN: port(10000),
    TUNNEL_PORT_MAX: port(20000),
    TUNNEL_LOCAL_UIDS: localUids,
    JWT_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
    ENCRYPTION_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
    METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
    TERMINAL_ENABLED: z.enum(['true', 'false']).default('true').transform((v) => v === 'true'),
    TERMINAL_SHELL: z.string().min(1).refine((v) => v.startsWith('/'), 'must be an absolute path').optional(),
    ALLOWED_ORIGINS: z
      .string()
      .default('')
      .transform((v, ctx) => {
        const origins = v.split(',').map((o) => o.trim()).filter(Boolean);
        for (const origin of origins) {
          let parsed: URL | undefined;
          try {
            parsed = new URL(origin);
          } catch {
            parsed = undefined;
          }
          if (!parsed || parsed.origin !== origin) {
            ctx.addIssue({ code: 'custom', message: `must be a comma-separated list of origins like https://rmm.example.net (got ${origin})` });
            return z.NEVER;
          }
        }
        return origins;
      }),
    WEBHOOK_ALLOW_LOOPBACK: z.enum(['true', 'false']).default('false').transform((v) => v === 'true'),
    WEB_CONSOLE_DIR: z.string().min(1).optional(),
    PUBLIC_URL: z
      .string()
      .trim()
      .refine((v) => {
        try {
          const url = new URL(v);
          return (url.protocol === 'https:' || url.protocol === 'http:') && !url.search && !url.hash;
        } catch {
          return false;
        }
      }, 'must be the console\'s base URL, like https://rmm.example.net')
      .transform((v) => v.replace(/\/+$/, ''))
      .optional(),
    FIRMWARE_MAX_BYTES: wholeNumber(String(256 * 1024 * 1024), 'bytes', 16 * 1024 * 1024 * 1024),
    FIRMWARE_PUBLIC_KEY: z
      .string()
      .trim()
      .refine((v) => {
        const raw = Buffer.from(v, 'base64');
        return raw.length === 32 && raw.toString('base64') === v;
      }, 'must be base64 of a raw 32-byte Ed25519 public key (as `npm run cli -- firmware sign` prints it)')
      .optional(),
    NATS_URL: z
      .string()
      .refine((v) => v.split(',').every((u) => /^(nats|tls):\/\/[^\s]+$/.test(u.trim())), 'must be a nats:// or tls:// URL (several: comma-separated)')
      .optional(),
    INSTANCE_ID: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1 to 64 letters, digits, "-" or "_" (it names NATS subjects)')
      .optional(),
    INTERNAL_URL: z
      .string()
      .trim()
      .refine((v) => {
        try {
          const url = new URL(v);
          return url.protocol === 'http:' && url.pathname === '/' && !url.search && !url.hash;
        } catch {
          return false;
        }
      }, 'must be the http:// base URL other instances reach this one at, like http://rmm-a:8080')
      .transform((v) => v.replace(/\/+$/, ''))
      .optional(),
    ADVERTISE_ADDRESS: z
      .string()
      .regex(/^[A-Za-z0-9.:[\]-]{1,253}$/, 'must be a host name or IP address clients can reach this instance at')
      .optional(),
    CALLSTATUS_PORT: port(8081),
    CALLSTATUS_DATABASE_URL: postgresUrl,
    CALLSTATUS_ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
    ADMIN_PASSWORD: z
      .string()
      .refine((v) => [...v].length >= 6, 'must be at least 6 characters')
      .refine((v) => Buffer.byteLength(v, 'utf8') <= 72, 'must be at most 72 bytes (UTF-8)')
      .optional(),
  })
  .superRefine((env, ctx) => {
    if (env.TUNNEL_PORT_MIN > env.TUNNEL_PORT_MAX) {
      ctx.addIssue({ code: 'custom', path: ['TUNNEL_PORT_MIN'], message: 'must not be above TUNNEL_PORT_MAX' });
    }
    // Several instances share one database; the embedded PGlite has one connection in one process.
    if (env.NATS_URL && !env.DATABASE_URL) {
      ctx.addIssue({
        code: 'custom',
        path: ['NATS_URL'],
        message: 'needs DATABASE_URL (PostgreSQL): cluster mode shares one database between instances, and the embedded PGlite database cannot be shared',
      });
    }
    // Every instance must sign and check the same tokens and open the same sealed secrets; generated
    // ones live in each instance's own DATA_DIR and would differ.
    for (const name of ['JWT_SECRET', 'ENCRYPTION_KEY'] as const) {
      if (env.NATS_URL && env.DATABASE_URL && !env[name]) {
        ctx.addIssue({ code: 'custom', path: [name], message: 'must be set in cluster mode (NATS_URL), the same on every instance' });
      }
    }
    // A certificate without its key (or the reverse) would silently serve plain HTTP: refuse it.
    if (Boolean(env.TLS_CERT_FILE) !== Boolean(env.TLS_KEY_FILE)) {
      const missing = env.TLS_CERT_FILE ? 'TLS_KEY_FILE' : 'TLS_CERT_FILE';
      ctx.addIssue({ code: 'custom', path: [missing], message: 'must be set together with the other TLS_* variable' });
    }
  });

export interface Config {
  readonly port: number;
  readonly host: string;
  /** Unset means the embedded PGlite database under `dataDir`. */
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  readonly logLevel: (typeof LOG_LEVELS)[number];
  readonly tls: { readonly certFile: string; readonly keyFile: string } | undefined;
  readonly trustProxy: boolean | number | string[];
  /** How often the status monitor looks for status changes. */
  readonly monitorIntervalSeconds: number;
  /** Metric samples older than this are deleted. */
  readonly metricsRetentionDays: number;
  /** Metric samples older than this are compacted (compressed on TimescaleDB). */
  readonly metricsCompressAfterDays: number;
  /** How far the JavaScript heap may grow past what survived its last full collection (platform/heap-growth.ts). */
  readonly heapGrowthPercent: number;
  /** The embedded database's buffer pool (its largest part of the server's memory). */
  readonly pgliteSharedBuffersMb: number;
  /** Where tunnel proxy ports listen, and the range they are taken from. */
  readonly tunnels: {
    readonly bindAddress: string;
    readonly portMin: number;
    readonly portMax: number;
    /** Accounts besides the server's own whose connections from the server itself tunnel ports let in ('any': every one). */
    readonly localUids: 'any' | readonly number[];
  };
  /** Unset: generated once and kept in DATA_DIR/jwt-secret. */
  readonly jwtSecret: string | undefined;
  /** Key material for secrets at rest; unset: generated once and kept in DATA_DIR/encryption-key. */
  readonly encryptionKey: string | undefined;
  /** Bearer token for GET /metrics; unset: only clients on this machine (loopback, not through a proxy). */
  readonly metricsToken: string | undefined;
  /** Password of the `admin` user created on first start; unset: one is generated and logged once. */
  readonly adminPassword: string | undefined;
  /** The web terminal: off answers 404; the shell (unset: /bin/bash, else /bin/sh). */
  readonly terminal: { readonly enabled: boolean; readonly shell: string | undefined };
  /** Origins besides the server's own that browsers may open the terminal WebSocket from. */
  readonly allowedOrigins: readonly string[];
  /** Lets task webhooks reach loopback addresses (local receivers and tests only). */
  readonly webhookAllowLoopback: boolean;
  /** The console's base URL for links in notifications; unset → the settings' backend_url. */
  readonly publicUrl: string | undefined;
  /** The built web console served at `/` (default: dist/web under the package root). */
  readonly webConsoleDir: string;
  /** Largest firmware binary or installer package accepted (413 above). */
  readonly firmwareMaxBytes: number;
  /** Unset: uploads may come without a signature. Set: every upload must carry one that verifies with it. */
  readonly firmwarePublicKey: string | undefined;
  /**
   * Cluster mode (NATS_URL set): several instances on one PostgreSQL, linked by NATS. Null: one
   * instance, the in-memory hub, nothing else to run.
   */
  readonly cluster: {
    readonly natsUrl: string;
    /** Names this process in NATS subjects, presence and leases (INSTANCE_ID; unset: generated per start). */
    readonly instanceId: string;
    /** The host clients reach this instance's tunnel ports at (ADVERTISE_ADDRESS; unset: the host name). */
    readonly advertiseAddress: string;
    /**
     * Where the other instances reach this one's HTTP port to forward a tunnel's proxy WebSocket
     * (INTERNAL_URL; unset: http://HOST:PORT, with ADVERTISE_ADDRESS when HOST is a wildcard).
     */
    readonly internalUrl: string | undefined;
  } | null;
  /** The call-status service (second app). */
  readonly callstatus: {
    readonly port: number;
    /** Unset means its own embedded PGlite database under `dataDir`/callstatus. */
    readonly databaseUrl: string | undefined;
    /** Bearer token of its admin API; unset disables that API. */
    readonly adminToken: string | undefined;
  };
}

/** Thrown for an invalid environment; its message is the one line start-up prints. */
export class ConfigError extends Error {
  constructor(readonly variable: string, message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable (`PORT=`) means "not set", as most shells and compose files intend it.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = envSchema.safeParse(present);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const variable = String(issue.path[0] ?? 'environment');
    const raw = present[variable];
    const shown = raw === undefined || SECRET_VARIABLES.has(variable) ? '' : ` (got ${JSON.stringify(raw)})`;
    throw new ConfigError(variable, `Invalid configuration: ${variable} ${issue.message}${shown}`);
  }
  const e = result.data;
  return Object.freeze({
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    dataDir: path.resolve(e.DATA_DIR),
    logLevel: e.LOG_LEVEL,
    tls: e.TLS_CERT_FILE && e.TLS_KEY_FILE ? Object.freeze({ certFile: e.TLS_CERT_FILE, keyFile: e.TLS_KEY_FILE }) : undefined,
    trustProxy: e.TRUST_PROXY,
    monitorIntervalSeconds: e.MONITOR_INTERVAL_SECONDS,
    metricsRetentionDays: e.METRICS_RETENTION_DAYS,
    metricsCompressAfterDays: e.METRICS_COMPRESS_AFTER_DAYS,
    heapGrowthPercent: e.HEAP_GROWTH_PERCENT,
    pgliteSharedBuffersMb: e.PGLITE_SHARED_BUFFERS_MB,
    tunnels: Object.freeze({ bindAddress: e.TUNNEL_BIND_ADDRESS, portMin: e.TUNNEL_PORT_MIN, portMax: e.TUNNEL_PORT_MAX, localUids: e.TUNNEL_LOCAL_UIDS }),
    jwtSecret: e.JWT_SECRET,
    encryptionKey: e.ENCRYPTION_KEY,
    metricsToken: e.METRICS_TOKEN,
    adminPassword: e.ADMIN_PASSWORD,
    firmwareMaxBytes: e.FIRMWARE_MAX_BYTES,
    firmwarePublicKey: e.FIRMWARE_PUBLIC_KEY,
    webConsoleDir: path.resolve(e.WEB_CONSOLE_DIR ?? path.join(packageRoot() ?? '.', 'dist', 'web')),
    webhookAllowLoopback: e.WEBHOOK_ALLOW_LOOPBACK,
    publicUrl: e.PUBLIC_URL,
    terminal: Object.freeze({ enabled: e.TERMINAL_ENABLED, shell: e.TERMINAL_SHELL }),
    allowedOrigins: Object.freeze(e.ALLOWED_ORIGINS),
    cluster: e.NATS_URL
      ? Object.freeze({
          natsUrl: e.NATS_URL,
          instanceId: e.INSTANCE_ID ?? `${os.hostname().replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 40)}-${randomBytes(4).toString('hex')}`,
          advertiseAddress: e.ADVERTISE_ADDRESS ?? os.hostname(),
          internalUrl: e.INTERNAL_URL,
        })
      : null,
    callstatus: Object.freeze({ port: e.CALLSTATUS_PORT, databaseUrl: e.CALLSTATUS_DATABASE_URL, adminToken: e.CALLSTATUS_ADMIN_TOKEN }),
  });
}
