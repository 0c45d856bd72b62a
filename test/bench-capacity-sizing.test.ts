// The sizing arithmetic of the capacity bench (bench/lib/capacity-sizing.ts), on made-up costs: the
// per-agent slope between two fleet sizes with its fixed part, the fallback when noise makes the slope
// meaningless, and what agents per core, per GiB and per day follow from them. No timing is asserted.
import { describe, expect, it } from 'vitest';
import { deployment, lineThrough, sizing, type CapacityPoint } from '../bench/lib/capacity-sizing.js';

const MiB = 1024 ** 2;

/** A window of `agents` at one heartbeat a minute, costing a fixed part plus a part per agent. */
function point(agents: number): CapacityPoint {
  const seconds = 100;
  const heartbeats = (agents * seconds) / 60;
  return {
    agents,
    seconds,
    serverCpuMs: (0.02 + agents * 0.0001) * seconds * 1000, // 2 % of a core fixed, 0.01 % per agent
    databaseCpuMs: agents * 0.00005 * seconds * 1000, // 0.005 % per agent, nothing fixed
    heartbeats,
    rssBytes: 150 * MiB + agents * 10 * 1024,
    heapBytes: 50 * MiB + agents * 5 * 1024,
    bytesIn: heartbeats * 30_000,
    bytesOut: heartbeats * 300,
    metricBytes: heartbeats * 600,
    samples: heartbeats * 20,
    walBytes: heartbeats * 8_000,
  };
}

const assumptions = { headroom: 0.5, heartbeatIntervalS: 60, backupBytes: 4_000, backupsPerDay: 1, firewallShare: 0.4 };

describe('capacity sizing', () => {
  it('takes the slope between two points as the cost of one more agent, and the rest as fixed', () => {
    expect(lineThrough({ x: 500, y: 25 }, { x: 2000, y: 40 })).toEqual({ perAgent: 0.01, fixed: 20, fallback: false });
  });

  it('falls back to all ÷ agents at the larger point when the larger point cost no more', () => {
    expect(lineThrough({ x: 500, y: 30 }, { x: 2000, y: 20 })).toEqual({ perAgent: 0.01, fixed: 0, fallback: true });
  });

  it('sizes agents per core, per GiB and per day from the two windows', () => {
    const z = sizing(point(500), point(2000), assumptions);
    expect(z.serverCoresPerAgent.perAgent).toBeCloseTo(0.0001, 9);
    expect(z.serverCoresPerAgent.fixed).toBeCloseTo(0.02, 9);
    expect(z.databaseCoresPerAgent?.perAgent).toBeCloseTo(0.00005, 9);
    expect(z.agentsPerCore).toBeCloseTo(0.5 / 0.00015, 6);
    expect(z.agentsPerGiB).toBeCloseTo(1024 ** 3 / (10 * 1024), 6);
    expect(z.rssBytesPerAgent.fixed).toBeCloseTo(150 * MiB, 0);
    expect(z.metricBytesPerAgentDay).toBeCloseTo(600 * 1440, 6);
    expect(z.walBytesPerAgentDay).toBeCloseTo(8_000 * 1440, 6);
    expect(z.backupBytesPerAgentDay).toBeCloseTo(1_600, 6);
    expect(z.networkBytesPerAgentDay).toBeCloseTo((30_300 / 60) * 86_400, 3);
    expect(z.perHeartbeat.samples).toBeCloseTo(20, 9);
  });

  it('takes WAL only from the windows nothing else wrote in, and gives none when both were shared', () => {
    const shared = { ...point(500), walBytes: point(500).walBytes * 50, walShared: true };
    const one = sizing(shared, point(2000), assumptions);
    expect(one.walWindows).toBe(1);
    expect(one.perHeartbeat.walBytes).toBeCloseTo(8_000, 6);
    const none = sizing(shared, { ...point(2000), walShared: true }, assumptions);
    expect(none.walWindows).toBe(0);
    expect(none.walBytesPerAgentDay).toBeNaN();
  });

  it('leaves the database out when it was not measured apart (PGlite)', () => {
    const { databaseCpuMs: _small, ...small } = point(500);
    const { databaseCpuMs: _large, ...large } = point(2000);
    const z = sizing(small, large, assumptions);
    expect(z.databaseCoresPerAgent).toBeUndefined();
    expect(z.perHeartbeat.databaseCpuUs).toBeUndefined();
    expect(z.agentsPerCore).toBeCloseTo(0.5 / 0.0001, 6);
  });

  it('sizes a deployment: the fixed part once, the per-agent part per agent, at the headroom', () => {
    const d = deployment(sizing(point(500), point(2000), assumptions), 10_000, 0.5, 90);
    expect(d.cores).toBeCloseTo((0.02 + 10_000 * 0.00015) / 0.5, 6);
    expect(d.ramGiB).toBeCloseTo((150 * MiB + 10_000 * 10 * 1024) / 1024 ** 3, 6);
    expect(d.diskGiBPerDay).toBeCloseTo(((600 * 1440 + 1_600) * 10_000) / 1024 ** 3, 6);
    expect(d.metricsGiBKept).toBeCloseTo((600 * 1440 * 90 * 10_000) / 1024 ** 3, 6);
    expect(d.walGiBPerDay).toBeCloseTo((8_000 * 1440 * 10_000) / 1024 ** 3, 6);
  });
});
