// The ping check's reading of the device's ping, on what iputils, FreeBSD, BusyBox and Windows print.
import { describe, expect, it } from 'vitest';
import { parsePingOutput, pingArgs } from './ping-output.js';

const IPUTILS = `PING 127.0.0.1 (127.0.0.1) 56(84) bytes of data.
64 bytes from 127.0.0.1: icmp_seq=1 ttl=64 time=0.839 ms
64 bytes from 127.0.0.1: icmp_seq=2 ttl=64 time=0.038 ms

--- 127.0.0.1 ping statistics ---
2 packets transmitted, 2 received, 0% packet loss, time 1021ms
rtt min/avg/max/mdev = 0.038/0.438/0.839/0.400 ms
`;

const IPUTILS_LOST = `PING 192.0.2.1 (192.0.2.1) 56(84) bytes of data.

--- 192.0.2.1 ping statistics ---
3 packets transmitted, 0 received, 100% packet loss, time 2047ms
`;

const FREEBSD = `PING 10.0.0.1 (10.0.0.1): 56 data bytes
64 bytes from 10.0.0.1: icmp_seq=0 ttl=64 time=0.291 ms
64 bytes from 10.0.0.1: icmp_seq=1 ttl=64 time=0.318 ms
64 bytes from 10.0.0.1: icmp_seq=2 ttl=64 time=0.305 ms

--- 10.0.0.1 ping statistics ---
3 packets transmitted, 2 packets received, 33.3% packet loss
round-trip min/avg/max/stddev = 0.291/0.305/0.318/0.011 ms
`;

const BUSYBOX = `PING 127.0.0.1 (127.0.0.1): 56 data bytes
64 bytes from 127.0.0.1: seq=0 ttl=64 time=0.060 ms

--- 127.0.0.1 ping statistics ---
1 packets transmitted, 1 packets received, 0% packet loss
round-trip min/avg/max = 0.060/0.060/0.060 ms
`;

const WINDOWS = `
Pinging 10.0.0.1 with 32 bytes of data:
Reply from 10.0.0.1: bytes=32 time=1ms TTL=64
Reply from 10.0.0.1: bytes=32 time=2ms TTL=64
Request timed out.

Ping statistics for 10.0.0.1:
    Packets: Sent = 3, Received = 2, Lost = 1 (33% loss),
Approximate round trip times in milli-seconds:
    Minimum = 1ms, Maximum = 2ms, Average = 1ms
`;

describe('ping output', () => {
  it('reads loss and the average round trip of each platform', () => {
    expect(parsePingOutput(IPUTILS)).toEqual({ lossPercent: 0, rttMs: 0.438 });
    expect(parsePingOutput(IPUTILS_LOST)).toEqual({ lossPercent: 100, rttMs: null });
    expect(parsePingOutput(FREEBSD)).toEqual({ lossPercent: 33.3, rttMs: 0.305 });
    expect(parsePingOutput(BUSYBOX)).toEqual({ lossPercent: 0, rttMs: 0.06 });
    expect(parsePingOutput(WINDOWS)).toEqual({ lossPercent: 33, rttMs: 1 });
    expect(parsePingOutput('ping: unknown host nowhere.invalid\n')).toEqual({ lossPercent: null, rttMs: null });
  });

  it('asks each platform for count echoes and a wait per reply in its own unit', () => {
    expect(pingArgs('linux', 'h', 3, 2)).toEqual(['-n', '-c', '3', '-W', '2', 'h']);
    expect(pingArgs('freebsd', 'h', 3, 2)).toEqual(['-n', '-c', '3', '-W', '2000', 'h']);
    expect(pingArgs('win32', 'h', 3, 2)).toEqual(['-n', '3', '-w', '2000', 'h']);
  });
});
