import { describe, expect, it } from 'vitest';
import { redactUrl } from './logger.js';

describe('redactUrl', () => {
  it('leaves URLs without credentials alone', () => {
    expect(redactUrl('/api/v1/agents')).toBe('/api/v1/agents');
    expect(redactUrl('/api/v1/agents?limit=5&q=fw')).toBe('/api/v1/agents?limit=5&q=fw');
  });

  it('redacts api_key and token values and keeps the rest', () => {
    expect(redactUrl('/agent/ws?agent_id=ab12&api_key=rmm_secret&x=1')).toBe(
      '/agent/ws?agent_id=ab12&api_key=[redacted]&x=1',
    );
    expect(redactUrl('/terminal?token=eyJhbGciOi.x.y&cols=80')).toBe('/terminal?token=[redacted]&cols=80');
  });

  it('catches repeated, upper-case and percent-encoded names', () => {
    const out = redactUrl('/x?api_key=a1&API_KEY=a2&api%5Fkey=a3&tok%65n=a4');
    expect(out).not.toMatch(/a[1-4]/);
    expect(out.match(/\[redacted\]/g)).toHaveLength(4);
  });

  it('survives malformed percent-encoding', () => {
    expect(redactUrl('/x?%E0%A4%A=1&token=t')).toBe('/x?%E0%A4%A=1&token=[redacted]');
  });
});
