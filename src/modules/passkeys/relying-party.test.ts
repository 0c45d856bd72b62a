import { describe, expect, it } from 'vitest';
import { AppError } from '../../platform/errors.js';
import { relyingPartyOf } from './relying-party.js';

const refused = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err instanceof AppError ? err.code : 'other';
  }
  return 'accepted';
};

describe('relyingPartyOf', () => {
  it("takes the server's own origin, with the host name as RP ID", () => {
    expect(relyingPartyOf({ origin: 'https://rmm.example.net', protocol: 'https', host: 'rmm.example.net' }, [])).toEqual({
      origin: 'https://rmm.example.net',
      rpID: 'rmm.example.net',
    });
    expect(relyingPartyOf({ origin: 'http://localhost:5173', protocol: 'http', host: 'localhost:5173' }, [])).toEqual({ origin: 'http://localhost:5173', rpID: 'localhost' });
  });

  it('takes an origin listed in ALLOWED_ORIGINS', () => {
    expect(relyingPartyOf({ origin: 'https://console.example.net', protocol: 'http', host: 'backend:8080' }, ['https://console.example.net']).rpID).toBe('console.example.net');
  });

  it("takes PUBLIC_URL's origin as the server's own when it is set, whatever the Host header says", () => {
    expect(relyingPartyOf({ origin: 'https://rmm.example.net', protocol: 'http', host: 'backend:8080' }, [], 'https://rmm.example.net/')).toEqual({
      origin: 'https://rmm.example.net',
      rpID: 'rmm.example.net',
    });
    expect(refused(() => relyingPartyOf({ origin: 'https://evil.example', protocol: 'https', host: 'evil.example' }, [], 'https://rmm.example.net'))).toBe('FORBIDDEN');
  });

  it('refuses a missing, foreign or malformed Origin, and IP addresses', () => {
    expect(refused(() => relyingPartyOf({ origin: undefined, protocol: 'https', host: 'rmm.example.net' }, []))).toBe('FORBIDDEN');
    expect(refused(() => relyingPartyOf({ origin: 'https://evil.example', protocol: 'https', host: 'rmm.example.net' }, []))).toBe('FORBIDDEN');
    // Same host, other scheme or port: another origin.
    expect(refused(() => relyingPartyOf({ origin: 'http://rmm.example.net', protocol: 'https', host: 'rmm.example.net' }, []))).toBe('FORBIDDEN');
    expect(refused(() => relyingPartyOf({ origin: 'https://rmm.example.net:8443', protocol: 'https', host: 'rmm.example.net' }, []))).toBe('FORBIDDEN');
    expect(refused(() => relyingPartyOf({ origin: 'null', protocol: 'https', host: 'rmm.example.net' }, []))).toBe('FORBIDDEN');
    expect(refused(() => relyingPartyOf({ origin: 'http://127.0.0.1:8080', protocol: 'http', host: '127.0.0.1:8080' }, []))).toBe('FORBIDDEN');
    expect(refused(() => relyingPartyOf({ origin: 'http://[::1]:8080', protocol: 'http', host: '[::1]:8080' }, []))).toBe('FORBIDDEN');
  });
});
