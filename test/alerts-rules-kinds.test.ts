// Each kind of alert rule fires on what it watches and resolves when that is over (issue 31, build 2),
// on the real server with its background jobs on a FakeClock: a certificate in use expiring within N
// days (named as the label; one not in use is ignored; renewing it resolves), a firewall's newest
// configuration backup older than N days (a fresh one resolves), a requested update not applied after
// N hours (clearing the request resolves), a task run that ends in error (labelled with the task, its
// summary naming it), and a metric rule on one label only (a disk rule on /var ignores /).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AlertRig, MIN } from './helpers/alert-rig.js';

/** Tests that move the FakeClock through many minutes take a while on a loaded machine. */
const LONG = 120_000;

const DAY = 24 * 60 * MIN;
let rig: AlertRig;

beforeAll(async () => {
  rig = await AlertRig.start();
});
afterAll(() => rig?.close());

const inDays = (days: number) => new Date(rig.clock.now().getTime() + days * DAY).toISOString();

describe('certificate_expiry', () => {
  it('fires per certificate in use expiring within the days, named as the label, and resolves once renewed', async () => {
    const agentId = await rig.newAgent('cert-fw', { platform: 'freebsd' });
    const ruleId = await rig.rule({ name: 'Certificates', kind: 'certificate_expiry', agent_id: agentId, params: { days: 14 } });
    const certificates = (vpnValidTo: string) => ({
      certificates: [
        { name: 'vpn.example.net', valid_to: vpnValidTo, in_use: true },
        { name: 'old-spare', valid_to: inDays(2), in_use: false },
        { name: 'webgui', valid_to: inDays(90), in_use: true },
      ],
    });
    await rig.heartbeat(agentId, 10, certificates(inDays(10)));
    await rig.minutes(2);
    const [alert] = await rig.awaitAlerts(ruleId, 1);
    expect(alert).toMatchObject({ kind: 'certificate_expiry', state: 'firing', label: 'vpn.example.net' });
    expect(alert!.summary).toMatch(/^Certificate "vpn.example.net" in use expires on .* \(in 10 days\); limit 14 days$/);

    await rig.heartbeat(agentId, 10, certificates(inDays(400)));
    await rig.minutes(1);
    const after = await rig.awaitAlerts(ruleId, 1, 'resolved');
    expect(after).toMatchObject([{ id: alert!.id, state: 'resolved', resolved_by: null }]);
    await rig.minutes(2);
    expect(await rig.alerts(`rule_id=${ruleId}`)).toHaveLength(1);
  });

  it('reads valid_to in any format JavaScript reads, and names an unnamed certificate by its place', async () => {
    const agentId = await rig.newAgent('cert-formats', { platform: 'freebsd' });
    const ruleId = await rig.rule({ name: 'Certificate formats', kind: 'certificate_expiry', agent_id: agentId, params: { days: 14 } });
    const soon = new Date(rig.clock.now().getTime() + 5 * DAY);
    await rig.heartbeat(agentId, 10, {
      certificates: [
        { name: 'far-iso', valid_to: inDays(30), in_use: true },
        { name: 'mail.example.net', valid_to: soon.toUTCString(), in_use: true },
        { name: 'garbled', valid_to: 'not a date', in_use: true },
        { valid_to: inDays(3), in_use: true },
        { name: 'date-only', valid_to: inDays(6).slice(0, 10), in_use: true },
      ],
    });
    await rig.minutes(2);
    const alerts = await rig.awaitAlerts(ruleId, 3);
    expect(alerts.map((a) => a.label).sort()).toEqual(['certificate 4', 'date-only', 'mail.example.net']);
  });
});

describe('backup_age', () => {
  const backup = (agentId: string, content: string, createdAt: Date) =>
    rig.t.db.db.insertInto('config_backups').values({ agent_id: agentId, hash: content.padEnd(64, '0'), size: content.length, content, created_at: createdAt }).execute();

  it('fires for a firewall whose newest configuration backup is older than the days, and resolves on a fresh one', async () => {
    const agentId = await rig.newAgent('backup-fw', { platform: 'freebsd' });
    await backup(agentId, 'a1', new Date(rig.clock.now().getTime() - 10 * DAY));
    const ruleId = await rig.rule({ name: 'Backups', kind: 'backup_age', agent_id: agentId, params: { days: 7 } });
    await rig.minutes(2);
    const [alert] = await rig.awaitAlerts(ruleId, 1);
    expect(alert).toMatchObject({ kind: 'backup_age', state: 'firing', label: '' });
    expect(alert!.summary).toMatch(/^Newest configuration backup is 10 days old .*; limit 7 days$/);

    await backup(agentId, 'b2', rig.clock.now());
    await rig.minutes(1);
    expect(await rig.awaitAlerts(ruleId, 1, 'resolved')).toMatchObject([{ id: alert!.id, resolved_by: null }]);
  });
});

describe('update_pending', () => {
  it('fires once a requested update is still not applied after the hours, and resolves when the request is cleared', { timeout: LONG }, async () => {
    const agentId = await rig.newAgent('update-fw', { platform: 'freebsd' });
    const ruleId = await rig.rule({ name: 'Updates', kind: 'update_pending', agent_id: agentId, params: { hours: 2 } });
    expect((await rig.call('POST', `/agents/${agentId}/request-update`)).status).toBe(200);
    await rig.jump(118 * MIN);
    await rig.minutes(1);
    expect(await rig.alerts(`rule_id=${ruleId}`), 'not before 2 hours').toEqual([]);
    await rig.minutes(2);
    const [alert] = await rig.awaitAlerts(ruleId, 1);
    expect(alert).toMatchObject({ kind: 'update_pending', state: 'firing' });
    expect(alert!.summary).toMatch(/^Update requested 2(\.\d)? h ago .* not applied yet; limit 2 h$/);

    expect((await rig.call('DELETE', `/agents/${agentId}/request-update`)).status).toBe(200);
    await rig.minutes(1);
    expect(await rig.awaitAlerts(ruleId, 1, 'resolved')).toMatchObject([{ id: alert!.id, resolved_by: null }]);
  });
});

describe('task_failed', () => {
  it('fires for a task whose run ends in error (the agent is not connected), labelled with the task and naming it', async () => {
    const agentId = await rig.newAgent('task-host');
    const ruleId = await rig.rule({ name: 'Task failures', kind: 'task_failed', agent_id: agentId });
    const warningsOnly = await rig.rule({ name: 'Task warnings', kind: 'task_failed', agent_id: agentId, params: { statuses: ['completed_with_warning'] } });
    // No wait for the agent (agent_wait_timeout 0): the run ends in error at once.
    const created = await rig.call<{ id: number }>('POST', '/tasks', { agent_id: agentId, kind: 'exec', name: 'Nightly cleanup', params: { command: 'echo hi' }, agent_wait_timeout: 0 });
    expect(created.status).toBe(201);
    const taskId = created.body.id;
    await vi.waitFor(async () => {
      const runs = (await rig.call<Array<{ status: string; error: string | null }>>('GET', `/tasks/${taskId}/runs`)).body;
      expect(runs).toMatchObject([{ status: 'error', error: expect.stringMatching(/not connected/) }]);
    });
    const [alert] = await rig.awaitAlerts(ruleId, 1);
    expect(alert).toMatchObject({ kind: 'task_failed', state: 'firing', label: `task ${taskId}`, agent_id: agentId });
    expect(alert!.summary).toMatch(/^Task "Nightly cleanup" \(exec\) failed: .*not connected/);
    expect(await rig.alerts(`rule_id=${warningsOnly}`), 'a rule for warnings only ignores errors').toEqual([]);
  });
});

describe('metric_threshold with a label', () => {
  it('watches only its label: a disk rule on /var ignores / above the threshold; without a label each mount fires alone', async () => {
    const agentId = await rig.newAgent('disk-host');
    const disk = { metric: 'disk_used_percent', operator: '>', threshold: 90, for_seconds: 0 };
    const varRule = await rig.rule({ name: '/var full', kind: 'metric_threshold', agent_id: agentId, params: { ...disk, label: '/var' } });
    const disks = (root: number, varPercent: number) => ({ disks: [{ mount: '/', used_percent: root }, { mount: '/var', used_percent: varPercent }] });
    await rig.heartbeat(agentId, 10, disks(97, 40));
    await rig.minutes(1);
    await rig.heartbeat(agentId, 10, disks(97, 95));
    const [alert] = await rig.awaitAlerts(varRule, 1);
    // Heartbeats are evaluated in order: by now the / samples were seen and did not fire.
    expect(await rig.alerts(`rule_id=${varRule}`)).toMatchObject([{ label: '/var', state: 'firing', value: 95 }]);
    expect(alert!.summary).toMatch(/^Disk used on \/var is 95 % \(> 90 %\)/);

    const anyMount = await rig.rule({ name: 'any disk full', kind: 'metric_threshold', agent_id: agentId, params: disk });
    await rig.heartbeat(agentId, 10, disks(97, 95));
    await rig.awaitAlerts(anyMount, 2);
    expect((await rig.alerts(`rule_id=${anyMount}`)).map((a) => a.label).sort()).toEqual(['/', '/var']);
  });
});
