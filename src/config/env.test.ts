import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './env.js';

function failure(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

/** What every cluster-mode instance needs besides NATS_URL. */
const CLUSTER = { DATABASE_URL: 'postgres://u@h/rmm', JWT_SECRET: 'j'.repeat(32), ENCRYPTION_KEY: 'e'.repeat(32) };

describe('loadConfig', () => {
  it('applies the contract defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ port: 8080, host: '0.0.0.0', databaseUrl: undefined, logLevel: 'info', tls: undefined });
    expect(config.dataDir).toBe(path.resolve('./data'));
    expect(config.trustProxy).toBe(false);
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reads the call-status service variables: port 8081 by default, no admin token (admin API off)', () => {
    expect(loadConfig({}).callstatus).toEqual({ port: 8081, databaseUrl: undefined, adminToken: undefined });
    const config = loadConfig({ CALLSTATUS_PORT: '9081', CALLSTATUS_DATABASE_URL: 'postgres://u@h/cs', CALLSTATUS_ADMIN_TOKEN: 'a-long-enough-admin-token' });
    expect(config.callstatus).toEqual({ port: 9081, databaseUrl: 'postgres://u@h/cs', adminToken: 'a-long-enough-admin-token' });
  });

  it('refuses a short CALLSTATUS_ADMIN_TOKEN without echoing it', () => {
    const err = failure({ CALLSTATUS_ADMIN_TOKEN: 'short-secret' });
    expect(err.variable).toBe('CALLSTATUS_ADMIN_TOKEN');
    expect(err.message).not.toContain('short-secret');
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ PORT: '', DATABASE_URL: '' })).toMatchObject({ port: 8080, databaseUrl: undefined });
  });

  it.each([['abc'], ['-1'], ['70000'], ['80.5']])('rejects PORT=%s with one line naming PORT', (value) => {
    const err = failure({ PORT: value });
    expect(err.variable).toBe('PORT');
    expect(err.message).toMatch(/^Invalid configuration: PORT /);
    expect(err.message).toContain(JSON.stringify(value));
    expect(err.message).not.toContain('\n');
  });

  it("sizes the embedded database's buffer pool at 16 MB unless told, refusing 0 and fractions", () => {
    expect(loadConfig({}).pgliteSharedBuffersMb).toBe(16);
    expect(loadConfig({ PGLITE_SHARED_BUFFERS_MB: '128' }).pgliteSharedBuffersMb).toBe(128);
    for (const value of ['0', '4097', '1.5']) expect(failure({ PGLITE_SHARED_BUFFERS_MB: value }).variable).toBe('PGLITE_SHARED_BUFFERS_MB');
  });

  it('lets the heap grow to twice what survived by default; 0 leaves it to V8; anything else is refused with one line', () => {
    expect(loadConfig({}).heapGrowthPercent).toBe(100);
    expect(loadConfig({ HEAP_GROWTH_PERCENT: '0' }).heapGrowthPercent).toBe(0);
    expect(loadConfig({ HEAP_GROWTH_PERCENT: '250' }).heapGrowthPercent).toBe(250);
    for (const value of ['401', '-5', '1.5', 'lots']) {
      const err = failure({ HEAP_GROWTH_PERCENT: value });
      expect(err.variable).toBe('HEAP_GROWTH_PERCENT');
      expect(err.message).toBe(`Invalid configuration: HEAP_GROWTH_PERCENT must be a whole number of percent from 0 (V8 decides) to 400 (got ${JSON.stringify(value)})`);
    }
  });

  it('never echoes a secret value back', () => {
    const err = failure({ DATABASE_URL: 'mysql://user:hunter2@db/rmm' });
    expect(err.variable).toBe('DATABASE_URL');
    expect(err.message).not.toContain('hunter2');
  });

  it('accepts postgres URLs', () => {
    expect(loadConfig({ DATABASE_URL: 'postgresql://u:p@h:5432/db' }).databaseUrl).toBe('postgresql://u:p@h:5432/db');
  });

  it('rejects an unknown log level', () => {
    expect(failure({ LOG_LEVEL: 'verbose' }).variable).toBe('LOG_LEVEL');
  });

  it('needs both TLS files or neither', () => {
    expect(failure({ TLS_CERT_FILE: '/c.pem' }).variable).toBe('TLS_KEY_FILE');
    expect(failure({ TLS_KEY_FILE: '/k.pem' }).variable).toBe('TLS_CERT_FILE');
    expect(loadConfig({ TLS_CERT_FILE: '/c.pem', TLS_KEY_FILE: '/k.pem' }).tls).toEqual({
      certFile: '/c.pem',
      keyFile: '/k.pem',
    });
  });

  it('parses TRUST_PROXY as a flag, a hop count or a proxy list', () => {
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy).toEqual(['10.0.0.0/8', '127.0.0.1']);
    expect(failure({ TRUST_PROXY: 'yes please' }).variable).toBe('TRUST_PROXY');
  });

  it('lets no other local account use tunnel ports unless TUNNEL_LOCAL_UIDS names it (or says any)', () => {
    expect(loadConfig({}).tunnels.localUids).toEqual([]);
    expect(loadConfig({ TUNNEL_LOCAL_UIDS: '1000, 1001' }).tunnels.localUids).toEqual([1000, 1001]);
    expect(loadConfig({ TUNNEL_LOCAL_UIDS: 'any' }).tunnels.localUids).toBe('any');
    for (const value of ['alice', '-1', '1000,any', '4294967296']) expect(failure({ TUNNEL_LOCAL_UIDS: value }).variable, value).toBe('TUNNEL_LOCAL_UIDS');
  });

  it('stays single-node without NATS_URL, and turns cluster mode on with NATS_URL and PostgreSQL', () => {
    expect(loadConfig({}).cluster).toBeNull();
    const a = loadConfig({ ...CLUSTER, NATS_URL: 'nats://127.0.0.1:4222' }).cluster;
    const b = loadConfig({ ...CLUSTER, NATS_URL: 'nats://127.0.0.1:4222' }).cluster;
    expect(a).toMatchObject({ natsUrl: 'nats://127.0.0.1:4222', instanceId: expect.stringMatching(/^[A-Za-z0-9_-]+$/) });
    // Generated per start: two processes on one host never share an id.
    expect(a!.instanceId).not.toBe(b!.instanceId);
    const named = loadConfig({ ...CLUSTER, NATS_URL: 'nats://n1:4222,nats://n2:4222', INSTANCE_ID: 'rmm-a', ADVERTISE_ADDRESS: 'rmm-a.example.net' });
    expect(named.cluster).toEqual({ natsUrl: 'nats://n1:4222,nats://n2:4222', instanceId: 'rmm-a', advertiseAddress: 'rmm-a.example.net', internalUrl: undefined });
    expect(loadConfig({ ...CLUSTER, NATS_URL: 'nats://n1:4222', INTERNAL_URL: 'http://rmm-a:8080/' }).cluster?.internalUrl).toBe('http://rmm-a:8080');
    expect(failure({ ...CLUSTER, NATS_URL: 'nats://n1:4222', INTERNAL_URL: 'rmm-a:8080' }).variable).toBe('INTERNAL_URL');
  });

  it('refuses NATS_URL on the embedded database with one line, without echoing the URL', () => {
    const err = failure({ NATS_URL: 'nats://user:s3cret@127.0.0.1:4222' });
    expect(err.variable).toBe('NATS_URL');
    expect(err.message).toMatch(/needs DATABASE_URL \(PostgreSQL\)/);
    expect(err.message).not.toContain('s3cret');
    expect(err.message.split('\n')).toHaveLength(1);
  });

  it('refuses an INSTANCE_ID that cannot name a NATS subject', () => {
    expect(failure({ ...CLUSTER, NATS_URL: 'nats://h:4222', INSTANCE_ID: 'a.b' }).variable).toBe('INSTANCE_ID');
    expect(failure({ ...CLUSTER, NATS_URL: 'http://h:4222' }).variable).toBe('NATS_URL');
  });

  it('needs the same JWT_SECRET and ENCRYPTION_KEY given to every instance in cluster mode', () => {
    expect(failure({ NATS_URL: 'nats://h:4222', DATABASE_URL: 'postgres://u@h/rmm', ENCRYPTION_KEY: CLUSTER.ENCRYPTION_KEY }).variable).toBe('JWT_SECRET');
    expect(failure({ NATS_URL: 'nats://h:4222', DATABASE_URL: 'postgres://u@h/rmm', JWT_SECRET: CLUSTER.JWT_SECRET }).variable).toBe('ENCRYPTION_KEY');
  });
});
