import { describe, expect, it } from 'vitest';
import { AppError } from '../platform/errors.js';
import { failureSummary, isDatabaseUnavailable, logFailure } from './db-errors.js';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable', () => {
  it('knows a database that is away: restarting, refusing, cut off, out of connections', () => {
    for (const code of ['57P01', '57P02', '57P03', '08006', '08001', '53300', '25006', 'ECONNREFUSED', 'ECONNRESET']) {
      expect(isDatabaseUnavailable(withCode(code)), code).toBe(true);
    }
    for (const message of [
      'Connection terminated unexpectedly',
      'Connection terminated due to connection timeout',
      'timeout exceeded when trying to connect',
      // A standby before its promotion (issue 57: a failover behind HAProxy), should the code be lost.
      'cannot execute UPDATE in a read-only transaction',
      'cannot execute nextval() in a read-only transaction',
    ]) {
      expect(isDatabaseUnavailable(new Error(message)), message).toBe(true);
    }
  });

  it('looks through our own wrapping errors and at the first error of an AggregateError', () => {
    expect(isDatabaseUnavailable(new AppError('SERVICE_UNAVAILABLE', 'could not store', { cause: withCode('57P01') }))).toBe(true);
    expect(isDatabaseUnavailable(new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], 'connect failed'))).toBe(true);
  });

  it('leaves errors of the statement itself, and other servers being away, alone', () => {
    // What fetch throws when a webhook target or a WLED device refuses the connection.
    expect(isDatabaseUnavailable(new TypeError('fetch failed', { cause: withCode('ECONNREFUSED') }))).toBe(false);
    for (const code of ['23505', '23503', '22P02', '42P01', '57014']) expect(isDatabaseUnavailable(withCode(code)), code).toBe(false);
    expect(isDatabaseUnavailable(new Error('boom'))).toBe(false);
    expect(isDatabaseUnavailable(null)).toBe(false);
    expect(isDatabaseUnavailable('Connection terminated')).toBe(false);
  });
});

describe('failureSummary', () => {
  it('says the code and message of the innermost cause, which is what the log needs of an outage', () => {
    const refused = withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432');
    expect(failureSummary(new AppError('SERVICE_UNAVAILABLE', 'could not store', { cause: new Error('wrapped', { cause: refused }) }))).toEqual({
      code: 'ECONNREFUSED',
      message: 'connect ECONNREFUSED 127.0.0.1:5432',
    });
    expect(failureSummary('text')).toEqual({ message: 'text' });
  });
});

describe('logFailure', () => {
  const recorder = () => {
    const lines: Array<{ level: string; fields: Record<string, unknown>; message: string }> = [];
    const at = (level: string) => (fields: object, message: string) => void lines.push({ level, fields: fields as Record<string, unknown>, message });
    return { lines, log: { warn: at('warn'), info: at('info'), error: at('error') } };
  };

  it('logs a failure because the database is away once per window at warn, with its cause and no stack', () => {
    const { lines, log } = recorder();
    for (let i = 0; i < 50; i++) logFailure(log, withCode('25006', 'cannot execute UPDATE in a read-only transaction'), { job: 'bulk' }, 'bulk action pass failed');
    expect(lines).toEqual([
      { level: 'warn', fields: { job: 'bulk', error: { code: '25006', message: 'cannot execute UPDATE in a read-only transaction' } }, message: 'bulk action pass failed: database unavailable' },
    ]);
  });

  it('logs any other failure as an error with the error itself, every time', () => {
    const { lines, log } = recorder();
    const boom = new Error('boom');
    logFailure(log, boom, { job: 'bulk' }, 'bulk action pass failed');
    logFailure(log, boom, { job: 'bulk' }, 'bulk action pass failed');
    expect(lines).toEqual([
      { level: 'error', fields: { job: 'bulk', err: boom }, message: 'bulk action pass failed' },
      { level: 'error', fields: { job: 'bulk', err: boom }, message: 'bulk action pass failed' },
    ]);
  });
});
