// The cluster capacity bench's arithmetic (bench/lib/cluster-model.ts) on made-up costs: the line through
// the steps, its prediction for each step, and the model for a large fleet. No timing is asserted.
import { describe, expect, it } from 'vitest';
import { checkAgainstPoints, clusterModel, fitLine, fitPlane, heartbeatCosts, type ClusterPoint } from '../bench/lib/cluster-model.js';

const MiB = 1024 ** 2;

/**
 * A 100 s window of `sockets` agents at `intervalS`: instances 30 ms/s fixed + 1 ms a heartbeat + 6 µs/s a socket,
 * PostgreSQL 0.5 ms, HAProxy 0.1 ms, NATS 0.02 ms and 2 messages, the fleet 2 ms; WAL 8,000 bytes a
 * heartbeat; the instances 300 MiB + 20 KiB an agent.
 */
function point(sockets: number, intervalS: number, walShared = false): ClusterPoint {
  const seconds = 100;
  const heartbeats = (sockets * seconds) / intervalS;
  return {
    sockets,
    intervalS,
    seconds,
    heartbeats,
    cpuMs: { instances: 30 * seconds + heartbeats + 0.006 * sockets * seconds, postgres: 0.5 * heartbeats, haproxy: 0.1 * heartbeats, nats: 0.02 * heartbeats, fleet: 2 * heartbeats },
    natsMsgs: 2 * heartbeats,
    ...(walShared ? {} : { walBytes: 8000 * heartbeats }),
    instanceRssBytes: 300 * MiB + sockets * 20 * 1024,
  };
}

const points = [point(2000, 60), point(6000, 60), point(9000, 60), point(9000, 15, true)];

describe('the cluster model', () => {
  it('separates a heartbeat’s cost from a socket’s only when the steps differ in interval', () => {
    const plane = fitPlane([
      { x: 10, s: 600, y: 5 + 20 + 6 },
      { x: 20, s: 1200, y: 5 + 40 + 12 },
      { x: 40, s: 1200, y: 5 + 80 + 12 },
    ]);
    expect(plane.perUnit).toBeCloseTo(2);
    expect(plane.perSocket).toBeCloseTo(0.01);
    expect(plane.fixed).toBeCloseTo(5);
    // All at one interval: the line on heartbeats alone, the sockets' part in its slope.
    const line = fitPlane([
      { x: 10, s: 600, y: 31 },
      { x: 20, s: 1200, y: 57 },
      { x: 30, s: 1800, y: 83 },
    ]);
    expect(line.perSocket).toBeUndefined();
    expect(line.perUnit).toBeCloseTo(2.6);
  });

  it('fits a line through the points, and falls back to the plain ratio when the slope is not positive', () => {
    const line = fitLine([
      { x: 1, y: 5 },
      { x: 2, y: 7 },
      { x: 3, y: 9 },
    ]);
    expect(line.perUnit).toBeCloseTo(2);
    expect(line.fixed).toBeCloseTo(3);
    expect(fitLine([{ x: 4, y: 8 }])).toEqual({ perUnit: 2, fixed: 0 });
    expect(fitLine([
      { x: 1, y: 9 },
      { x: 2, y: 3 },
    ])).toEqual({ perUnit: 4, fixed: 0 });
  });

  it('recovers each part’s cost per heartbeat, and WAL only from the windows nobody else wrote in', () => {
    const costs = heartbeatCosts(points, 3);
    expect(costs.cpu.instances.perUnit).toBeCloseTo(1);
    expect(costs.cpu.instances.perSocket).toBeCloseTo(0.006);
    expect(costs.cpu.instances.fixed).toBeCloseTo(30);
    expect(costs.cpu.postgres.perUnit).toBeCloseTo(0.5);
    expect(costs.cpu.haproxy.perUnit).toBeCloseTo(0.1);
    expect(costs.natsMsgs.perUnit).toBeCloseTo(2);
    expect(costs.walBytesPerHeartbeat).toBeCloseTo(8000);
    expect(costs.rss.perUnit).toBeCloseTo(20 * 1024);
    expect(costs.rss.fixed).toBeCloseTo(300 * MiB);
  });

  it('predicts each measured step’s CPU (the fleet left out) as measured when the costs are exact', () => {
    const checks = checkAgainstPoints(heartbeatCosts(points, 3), points);
    // 9,000 agents at 60 s: 150 heartbeats/s × 1.62 ms + 30 ms/s + 9,000 × 6 µs/s = 327 ms/s.
    expect(checks[2]!.measured).toBeCloseTo(0.327);
    for (const c of checks) expect(c.predicted).toBeCloseTo(c.measured);
  });

  it('sizes 100,000 agents at one heartbeat a minute', () => {
    const model = clusterModel(heartbeatCosts(points, 3), { agents: 100_000, intervalS: 60, headroom: 0.5, metricBytesPerAgentDay: 500 * 1024, retentionDays: 90, minInstances: 2 });
    expect(model.heartbeatsPerS).toBeCloseTo(1666.67);
    // 1.667 cores of heartbeats + 0.6 of sockets; each instance carries its 10 ms/s fixed part and 0.49 of a core more: 5 instances.
    expect(model.instances).toBe(5);
    expect(model.instanceCores).toBeCloseTo(1.6667 + 0.6 + 0.05);
    expect(model.postgresCores).toBeCloseTo(0.8333);
    expect(model.provisioned.postgres).toBe(2);
    expect(model.haproxyCores).toBeCloseTo(0.1667);
    expect(model.natsMsgsPerS).toBeCloseTo(3333.33, 1);
    expect(model.walBytesPerDay).toBeCloseTo(8000 * 1666.667 * 86_400, -6);
    expect(model.metricBytesPerDay).toBe(500 * 1024 * 100_000);
    expect(model.metricBytesHeld).toBe(500 * 1024 * 100_000 * 90);
    expect(model.instanceRssBytes).toBeCloseTo(5 * 100 * MiB + 100_000 * 20 * 1024);
  });
});
