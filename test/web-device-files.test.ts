// The console's own code for device files (issue 59) that runs without a browser: the chunked SHA-256
// an upload is checked with (the agent refuses a file whose bytes do not match it, so a wrong hash here
// would refuse every large upload) and the device paths behind the breadcrumbs.
import { createHash, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { crumbsOf, homePath, joinPath } from '../web/src/agent-detail/files/device-path.js';
import { Sha256 } from '../web/src/agent-detail/files/sha256.js';

describe('the console chunked SHA-256', () => {
  it('matches Node for any bytes cut into any chunks, across block and padding boundaries', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 700 }), fc.array(fc.integer({ min: 1, max: 130 }), { minLength: 1, maxLength: 20 }), (bytes, cuts) => {
        const hash = new Sha256();
        let offset = 0;
        for (let i = 0; offset < bytes.length; i++) {
          const size = cuts[i % cuts.length]!;
          hash.update(bytes.subarray(offset, offset + size));
          offset += size;
        }
        expect(hash.hex()).toBe(createHash('sha256').update(bytes).digest('hex'));
      }),
    );
  });

  it('matches Node for the empty input, exact block sizes and 8 MiB chunks of a larger file', () => {
    for (const size of [0, 55, 56, 63, 64, 65, 119, 120, 128]) {
      const bytes = randomBytes(size);
      expect(new Sha256().update(bytes).hex(), `${size} bytes`).toBe(createHash('sha256').update(bytes).digest('hex'));
    }
    const big = randomBytes(20 * 1024 * 1024 + 3);
    const hash = new Sha256();
    for (let offset = 0; offset < big.length; offset += 8 * 1024 * 1024) hash.update(big.subarray(offset, offset + 8 * 1024 * 1024));
    expect(hash.hex()).toBe(createHash('sha256').update(big).digest('hex'));
  });
});

describe('the console device paths', () => {
  it('splits Unix paths into breadcrumbs, each with its full path', () => {
    expect(crumbsOf('/')).toEqual([{ label: '/', path: '/' }]);
    expect(crumbsOf('/var/log/nginx')).toEqual([
      { label: '/', path: '/' },
      { label: 'var', path: '/var' },
      { label: 'log', path: '/var/log' },
      { label: 'nginx', path: '/var/log/nginx' },
    ]);
    expect(joinPath('/', 'etc')).toBe('/etc');
    expect(joinPath('/etc', 'hosts')).toBe('/etc/hosts');
    expect(homePath('linux')).toBe('/');
  });

  it('splits Windows paths at backslashes under their drive', () => {
    expect(crumbsOf('C:\\')).toEqual([{ label: 'C:\\', path: 'C:\\' }]);
    expect(crumbsOf('C:\\Users\\ann')).toEqual([
      { label: 'C:\\', path: 'C:\\' },
      { label: 'Users', path: 'C:\\Users' },
      { label: 'ann', path: 'C:\\Users\\ann' },
    ]);
    expect(joinPath('C:\\', 'Users')).toBe('C:\\Users');
    expect(joinPath('C:\\Users', 'ann')).toBe('C:\\Users\\ann');
    expect(homePath('windows')).toBe('C:\\');
  });
});
