// The summary of the device's own `ping`: packet loss in percent and the average round trip in ms, from
// iputils (Linux), BSD ping (FreeBSD, macOS), BusyBox and Windows' ping. The device's binary is used
// rather than raw ICMP sockets, which need privileges the agent may not have.

export interface PingSummary {
  /** Packet loss in percent; null when the output has no summary (an unknown host, say). */
  lossPercent: number | null;
  /** Average round trip in ms; null when no reply came. */
  rttMs: number | null;
}

export function parsePingOutput(text: string): PingSummary {
  // iputils: "3 packets transmitted, 3 received, 0% packet loss"; BSD: "0.0% packet loss";
  // Windows: "Lost = 0 (0% loss)".
  const loss = /([\d.]+)% (?:packet )?loss/.exec(text);
  // iputils "rtt min/avg/max/mdev = 0.038/0.438/0.839/0.400 ms", BSD/BusyBox "round-trip min/avg/max… = …".
  const unix = /(?:rtt|round-trip)[^=]*=\s*[\d.]+\/([\d.]+)\//.exec(text);
  const windows = /Average = (\d+)ms/.exec(text);
  const rtt = unix?.[1] ?? windows?.[1];
  return { lossPercent: loss ? Number(loss[1]) : null, rttMs: rtt !== undefined ? Number(rtt) : null };
}

/** The arguments of one ping run: `count` echoes, each waited for at most `waitS` seconds. */
export function pingArgs(platform: NodeJS.Platform, host: string, count: number, waitS: number): string[] {
  if (platform === 'win32') return ['-n', String(count), '-w', String(waitS * 1000), host];
  // FreeBSD's -W is in milliseconds, iputils' in seconds; -n: no reverse lookups, which may hang.
  if (platform === 'linux') return ['-n', '-c', String(count), '-W', String(waitS), host];
  return ['-n', '-c', String(count), '-W', String(waitS * 1000), host];
}
