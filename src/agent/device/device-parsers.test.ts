// The parsers of the process and service tools the reference agent cannot run on this Linux machine
// (FreeBSD's ps, Windows' PowerShell JSON), fed with those tools' real output shapes, and the Debian
// init-script rules (rc links, LSB status codes) on their edge cases.
import { describe, expect, it } from 'vitest';
import { parseStat } from './proc-linux.js';
import { cimDate, parsePs, parseWin32Processes } from './proc-other.js';
import { checkServiceName } from './services.js';
import { parseWindowsServices } from './svc-other.js';
import { startModes, stateOfStatus } from './svc-sysv.js';

describe('process parsers', () => {
  it("read FreeBSD's ps with its five-word start time and arguments with spaces", () => {
    const text = [
      '  PID  PPID USER     RSS %CPU STARTED                       COMMAND  COMMAND',
      '    1     0 root    1200  0.0 Sun Nov 29 08:00:01 2026      init     /sbin/init',
      '  812     1 unbound 65536 1,5 Sun Nov 29 08:00:09 2026     unbound  /usr/local/sbin/unbound -c /var/unbound/unbound.conf',
    ].join('\n');
    const [init, unbound] = parsePs(text);
    expect(init).toMatchObject({ pid: 1, ppid: 0, user: 'root', name: 'init', command: '/sbin/init', rss_bytes: 1200 * 1024, cpu_percent: 0 });
    expect(unbound).toMatchObject({ pid: 812, user: 'unbound', command: '/usr/local/sbin/unbound -c /var/unbound/unbound.conf', cpu_percent: 1.5 });
    expect(new Date(unbound!.started_at!).getFullYear()).toBe(2026);
  });

  it("read Windows' Win32_Process JSON, one object or many, both date forms", () => {
    const one = parseWin32Processes('{"ProcessId":4,"ParentProcessId":0,"Name":"System","CommandLine":null,"WorkingSetSize":147456,"CreationDate":"/Date(1795939200000)/"}');
    expect(one).toEqual([{ pid: 4, ppid: 0, user: null, name: 'System', command: 'System', cpu_percent: null, rss_bytes: 147456, started_at: '2026-11-29T08:00:00.000Z' }]);
    expect(cimDate('2026-11-29T01:02:03.5+01:00')).toBe('2026-11-29T00:02:03.500Z');
    expect(parseWin32Processes('[{"ProcessId":1,"Name":"a.exe"},{"ProcessId":2,"Name":"b.exe","CommandLine":"b.exe -x"}]').map((p) => p.command)).toEqual(['a.exe', 'b.exe -x']);
  });

  it('take a Linux process name with spaces and parentheses from /proc/<pid>/stat', () => {
    const stat = '4242 (tmux: server (1)) S 1 4242 4242 0 -1 4194560 1 0 0 0 120 30 0 0 20 0 1 0 5000 10000000 512 18446744073709551615';
    expect(parseStat(4242, stat)).toEqual({ pid: 4242, ppid: 1, name: 'tmux: server (1)', ticks: 150, startTicks: 5000, rssPages: 512 });
  });
});

describe('service rules', () => {
  it("map Windows' service status and start type, as numbers or names", () => {
    const services = parseWindowsServices('[{"Name":"Spooler","DisplayName":"Print Spooler","Status":4,"StartType":2},{"Name":"BITS","DisplayName":"Background Intelligent Transfer Service","Status":"Stopped","StartType":"Manual"},{"Name":"RemoteRegistry","DisplayName":"Remote Registry","Status":1,"StartType":4}]');
    expect(services.map((s) => [s.name, s.state, s.start_mode])).toEqual([
      ['Spooler', 'running', 'auto'],
      ['BITS', 'stopped', 'manual'],
      ['RemoteRegistry', 'stopped', 'disabled'],
    ]);
  });

  it('take the start mode from rc links: S in rcS or rc2–5 is auto, only K is disabled', () => {
    const modes = startModes({ '/etc/rc2.d': ['S01nginx', 'K01ssh', 'README'], '/etc/rc0.d': ['K01nginx', 'K01ssh', 'S01halt'], '/etc/rcS.d': ['S01procps'] });
    expect(Object.fromEntries(modes)).toEqual({ nginx: 'auto', ssh: 'disabled', halt: 'disabled', procps: 'auto' });
  });

  it('read LSB status codes, a usage text being unknown', () => {
    expect(stateOfStatus(0, false, '')).toBe('running');
    expect(stateOfStatus(3, false, 'nginx is not running ... failed!')).toBe('stopped');
    expect(stateOfStatus(1, false, 'pid file exists')).toBe('failed');
    expect(stateOfStatus(1, false, 'Usage: hwclock.sh {stop|reload}')).toBe('unknown');
    expect(stateOfStatus(0, true, '')).toBe('unknown');
  });

  it('refuse service names a shell or a path could use', () => {
    expect(checkServiceName('getty@tty1')).toBe('getty@tty1');
    for (const bad of ['nginx;id', '../nginx', '/etc/init.d/nginx', '-x', 'a b', 'a..b', '', 'x'.repeat(256)]) expect(() => checkServiceName(bad)).toThrow(/invalid service name/);
  });
});
