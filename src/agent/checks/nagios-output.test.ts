// The Nagios plugin convention as the agent reads it, on outputs real plugins printed (Monitoring Plugins
// 2.3 on Debian: check_tcp, check_disk, check_http, check_load, check_procs, check_swap).
import { describe, expect, it } from 'vitest';
import { MAX_CHECK_OUTPUT_CHARS, MAX_PERFDATA_ITEMS } from '../../modules/checks/check-protocol.js';
import { parsePerfdata, parsePluginOutput, stateOfExit } from './nagios-output.js';

describe('exit codes', () => {
  it('maps 0..3 to their states and anything else, or a signal, to UNKNOWN', () => {
    expect([0, 1, 2, 3, 4, 127, 255, -1, null].map(stateOfExit)).toEqual([0, 1, 2, 3, 3, 3, 3, 3, 3]);
  });
});

describe('plugin output', () => {
  it('check_tcp: text before the bar, time in seconds with min and max', () => {
    const r = parsePluginOutput('TCP OK - 0.000 second response time on 127.0.0.1 port 22|time=0.000123s;;;0.000000;10.000000\n', 0);
    expect(r).toEqual({
      state: 0,
      output: 'TCP OK - 0.000 second response time on 127.0.0.1 port 22',
      perfdata: [{ label: 'time', value: 0.000123, uom: 's', min: 0, max: 10 }],
    });
  });

  it('check_disk: a label that is a path, bytes, warn and crit as plain numbers', () => {
    const r = parsePluginOutput('DISK CRITICAL - free space: / 79088MiB (76% inode=96%);| /=26013073408B;2705525309;0;0;270552530944\n', 2);
    expect(r.state).toBe(2);
    expect(r.output).toBe('DISK CRITICAL - free space: / 79088MiB (76% inode=96%);');
    expect(r.perfdata).toEqual([{ label: '/', value: 26013073408, uom: 'B', warn: '2705525309', crit: '0', min: 0, max: 270552530944 }]);
  });

  it('check_http: several items, a size in bytes with an empty min', () => {
    const r = parsePluginOutput('HTTP OK: HTTP/1.1 200 OK - 10975 bytes in 0.001 second response time |time=0.001102s;;;0.000000;10.000000 size=10975B;;;0;\n', 0);
    expect(r.output).toBe('HTTP OK: HTTP/1.1 200 OK - 10975 bytes in 0.001 second response time');
    expect(r.perfdata).toEqual([
      { label: 'time', value: 0.001102, uom: 's', min: 0, max: 10 },
      { label: 'size', value: 10975, uom: 'B', min: 0 },
    ]);
  });

  it('check_load: trailing separators and a trailing space', () => {
    const r = parsePluginOutput('LOAD WARNING - total load average: 6.30, 3.64, 1.95|load1=6.300;5.000;10.000;0; load5=3.640;5.000;10.000;0; load15=1.950;5.000;10.000;0; \n', 1);
    expect(r.perfdata.map((p) => [p.label, p.value, p.warn, p.crit, p.min, p.max])).toEqual([
      ['load1', 6.3, '5.000', '10.000', 0, undefined],
      ['load5', 3.64, '5.000', '10.000', 0, undefined],
      ['load15', 1.95, '5.000', '10.000', 0, undefined],
    ]);
  });

  it('long output: further lines are text, and perfdata after a bar on a later line runs to the end', () => {
    const stdout = ['DISK OK - free space: / 3326 MB (56%); | /=2643MB;5948;5958;0;5968', '/ 15272 MB (77%);', '/boot 68 MB (69%); | /boot=68MB;88;93;0;98', "'/home dir'=69357MB;253404;253409;0;253414", ''].join('\n');
    const r = parsePluginOutput(stdout, 0);
    expect(r.output).toBe('DISK OK - free space: / 3326 MB (56%);\n/ 15272 MB (77%);\n/boot 68 MB (69%);');
    expect(r.perfdata.map((p) => `${p.label}=${p.value}${p.uom}`)).toEqual(['/=2643MB', '/boot=68MB', '/home dir=69357MB']);
  });

  it('quoted labels with spaces and escaped quotes, units, ranges, and U values skipped', () => {
    const items = parsePerfdata("'C:\\ used space'=31.5GB;40;45;0;50 'it''s'=5% rta=0.1ms;100.000;500.000;0; pl=U;20;60;; x=12c;@10:20;~:30 'bad label'");
    expect(items).toEqual([
      { label: 'C:\\ used space', value: 31.5, uom: 'GB', warn: '40', crit: '45', min: 0, max: 50 },
      { label: "it's", value: 5, uom: '%' },
      { label: 'rta', value: 0.1, uom: 'ms', warn: '100.000', crit: '500.000', min: 0 },
      { label: 'x', value: 12, uom: 'c', warn: '@10:20', crit: '~:30' },
    ]);
  });

  it('empty output, CRLF line ends, and a first line that is only perfdata', () => {
    expect(parsePluginOutput('', 0)).toEqual({ state: 0, output: '', perfdata: [] });
    expect(parsePluginOutput('OK all fine\r\nsecond line\r\n', 0).output).toBe('OK all fine\nsecond line');
    expect(parsePluginOutput('|a=1', 0)).toEqual({ state: 0, output: '', perfdata: [{ label: 'a', value: 1, uom: '' }] });
  });

  it('cuts the output at MAX_CHECK_OUTPUT_CHARS and keeps at most MAX_PERFDATA_ITEMS items', () => {
    const perf = Array.from({ length: MAX_PERFDATA_ITEMS + 20 }, (_, i) => `m${i}=${i}`).join(' ');
    const r = parsePluginOutput(`OK ${'x'.repeat(10_000)}|${perf}\n${'more\n'.repeat(2000)}`, 0);
    expect(r.output.length).toBeLessThanOrEqual(MAX_CHECK_OUTPUT_CHARS);
    expect(r.output).toMatch(/output cut\)$/);
    expect(r.perfdata).toHaveLength(MAX_PERFDATA_ITEMS);
    expect(r.perfdata.at(-1)).toEqual({ label: `m${MAX_PERFDATA_ITEMS - 1}`, value: MAX_PERFDATA_ITEMS - 1, uom: '' });
  });
});
