// Flapping is judged at the status a rule watches (issue 57, item 19): two absences of two and a half
// minutes in a quarter of an hour make an agent flap for a rule on `stale` (it went down and came back
// twice), not for the built-in rule on `offline` (it never was offline). An agent's first heartbeat is
// not a flip, so a new agent that is stopped, started and stopped again does not flap.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AlertRig, MIN } from './helpers/alert-rig.js';

let rig: AlertRig;
let offlineRule: number;
let staleRule: number;
beforeAll(async () => {
  rig = await AlertRig.start();
  offlineRule = await rig.rule({ name: 'Agent offline for 5 minutes', kind: 'agent_offline', params: { minutes: 5, status: 'offline' } });
  staleRule = await rig.rule({ name: 'Stale for 2 minutes', kind: 'agent_offline', params: { minutes: 2, status: 'stale' } });
});
afterAll(() => rig?.close());

/** Heartbeats every 30 s for `minutes`. */
async function present(agentId: string, minutes: number): Promise<void> {
  for (let t = 0; t < minutes * MIN; t += 30_000) {
    await rig.heartbeat(agentId);
    await rig.advance(30_000);
  }
}

const flapping = async (ruleId: number, agentId: string) => (await rig.alerts(`rule_id=${ruleId}&agent_id=${agentId}`)).filter((a) => a.kind === 'flapping');

describe('flapping', () => {
  it('two short absences flap for the stale rule, not for the offline rule', async () => {
    const id = await rig.newAgent('short-blips');
    await present(id, 16); // its first heartbeat is out of the 15-minute window
    for (let i = 0; i < 2; i++) {
      await rig.advance(2.5 * MIN);
      await present(id, 2);
    }
    expect(await flapping(offlineRule, id)).toEqual([]);
    expect((await rig.alerts(`rule_id=${offlineRule}&agent_id=${id}`)).length).toBe(0);
    const stale = await flapping(staleRule, id);
    expect(stale).toHaveLength(1);
    expect(stale[0]!.summary).toMatch(/^Flapping: went up or down 4 times in 15 minutes/);
  });

  it('a new agent stopped, started and stopped again does not flap', async () => {
    const id = await rig.newAgent('new-agent');
    await present(id, 1);
    await rig.advance(2.5 * MIN);
    await present(id, 1);
    await rig.advance(2.5 * MIN);
    expect(await flapping(staleRule, id)).toEqual([]);
    expect((await rig.alerts(`rule_id=${staleRule}&agent_id=${id}`)).map((a) => a.kind)).toEqual(['agent_offline', 'agent_offline']);
  });
});
