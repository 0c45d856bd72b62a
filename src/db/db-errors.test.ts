import { describe, expect, it } from 'vitest';
import { AppError } from '../platform/errors.js';
import { failureSummary, isDatabaseUnavailable } from './db-errors.js';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable', () => {
  it('knows a database that is away: restarting, refusing, cut off, out of connections', () => {
    for (const code of ['57P01', '57P02', '57P03', '08006', '08001', '53300', 'ECONNREFUSED', 'ECONNRESET']) {
      expect(isDatabaseUnavailable(withCode(code)), code).toBe(true);
    }
    for (const message of ['Connection terminated unexpectedly', 'Connection terminated due to connection timeout', 'timeout exceeded when trying to connect']) {
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
