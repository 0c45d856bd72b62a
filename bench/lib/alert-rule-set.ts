// The rules of the alerting benchmark's B rounds: 20 metric_threshold rules (the default "Disk over 90 %"
// and 19 created over the API) on the metrics technicians set thresholds on, plus the default offline
// and certificate rules, all notifying one webhook channel. A rounds have no enabled rule at all.
//
// What the load's heartbeats carry (the padded FreeBSD fixture, bench/lib/heartbeat-body.ts): CPU drawn
// afresh for every heartbeat, uniform 10–100 %; memory 37.5 % used; disks "/" 5 % and "/var/log" 1 %;
// gateways WAN_DHCP (4.8 ms, 0 % loss) and WAN2_LTE (38.2 ms, 2 % loss). So some rules never cross,
// six cross on every heartbeat of every agent (they fire once per agent, in the first round with rules),
// and the CPU rules cross on some heartbeats and not on others: they write threshold state on most
// heartbeats, and "CPU at 99 % or more" fires and resolves all the time (alerts and outbox rows).

/** The fields of POST/PUT /alert-rules the benchmark uses. */
export interface RuleBody {
  name: string;
  kind: string;
  enabled?: boolean;
  agent_id?: string | null;
  customer_id?: number | null;
  params?: Record<string, unknown>;
  channel_ids?: number[];
  reminder_minutes?: number | null;
}

interface StoredRule extends Required<Omit<RuleBody, 'params'>> {
  id: number;
  params: Record<string, unknown>;
}

const threshold = (name: string, params: Record<string, unknown>, agentId?: string): RuleBody => ({
  name,
  kind: 'metric_threshold',
  params,
  ...(agentId ? { agent_id: agentId } : {}),
});

/** The 19 created rules; with the default disk rule, 20. `oneAgent` gets a rule of its own. */
export function createdRules(oneAgent: string): RuleBody[] {
  return [
    // CPU: crossing on some heartbeats, not on others.
    threshold('CPU over 90 % for 5 min (clears below 80 %)', { metric: 'cpu_usage', operator: '>', threshold: 90, for_seconds: 300, recovery_threshold: 80 }),
    threshold('CPU at 99 % or more (clears below 50 %)', { metric: 'cpu_usage', operator: '>=', threshold: 99, for_seconds: 0, recovery_threshold: 50, recovery_seconds: 0 }),
    threshold('CPU over 95 % for 1 min', { metric: 'cpu_usage', operator: '>', threshold: 95, for_seconds: 60 }),
    threshold('CPU over 80 % for 10 min (clears below 70 %)', { metric: 'cpu_usage', operator: '>', threshold: 80, for_seconds: 600, recovery_threshold: 70 }),
    threshold('CPU over 50 % on one agent', { metric: 'cpu_usage', operator: '>', threshold: 50, for_seconds: 0, recovery_threshold: 40, recovery_seconds: 0 }, oneAgent),
    // Memory (37.5 %).
    threshold('Memory over 90 %', { metric: 'memory_used_percent', operator: '>', threshold: 90, recovery_threshold: 85 }),
    threshold('Memory over 35 %', { metric: 'memory_used_percent', operator: '>', threshold: 35, for_seconds: 0 }),
    // Disks, each mount separately or one mount ("/" 5 %, "/var/log" 1 %).
    threshold('Disk over 95 %', { metric: 'disk_used_percent', operator: '>', threshold: 95, for_seconds: 60 }),
    threshold('Disk over 4 % for 10 s', { metric: 'disk_used_percent', operator: '>', threshold: 4, for_seconds: 10 }),
    threshold('Disk /var/log over 0.5 %', { metric: 'disk_used_percent', label: '/var/log', operator: '>', threshold: 0.5, for_seconds: 0 }),
    threshold('Disk / over 80 %', { metric: 'disk_used_percent', label: '/', operator: '>', threshold: 80, for_seconds: 300 }),
    // Gateways (WAN_DHCP 4.8 ms 0 %, WAN2_LTE 38.2 ms 2 %).
    threshold('Gateway loss over 1 % for 5 s', { metric: 'gateway_loss_percent', operator: '>', threshold: 1, for_seconds: 5 }),
    threshold('Gateway loss over 10 % for 2 min', { metric: 'gateway_loss_percent', operator: '>', threshold: 10, for_seconds: 120 }),
    threshold('Gateway WAN_DHCP loss over 0 %', { metric: 'gateway_loss_percent', label: 'WAN_DHCP', operator: '>', threshold: 0, for_seconds: 60 }),
    threshold('Gateway RTT over 30 ms for 10 s', { metric: 'gateway_rtt_ms', operator: '>', threshold: 30, for_seconds: 10 }),
    threshold('Gateway RTT over 100 ms for 5 min', { metric: 'gateway_rtt_ms', operator: '>', threshold: 100, for_seconds: 300 }),
    threshold('Gateway WAN_DHCP RTT over 4.5 ms (clears below 4 ms)', { metric: 'gateway_rtt_ms', label: 'WAN_DHCP', operator: '>', threshold: 4.5, for_seconds: 0, recovery_threshold: 4 }),
    threshold('Gateway WAN2_LTE RTT over 200 ms', { metric: 'gateway_rtt_ms', label: 'WAN2_LTE', operator: '>', threshold: 200, for_seconds: 60 }),
    threshold('Gateway WAN2_LTE loss over 5 %', { metric: 'gateway_loss_percent', label: 'WAN2_LTE', operator: '>', threshold: 5, for_seconds: 60 }),
  ];
}

type Api = <T>(method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => Promise<T>;

/**
 * A: no rule enabled. B: every rule enabled. Q (quiet): every rule enabled, but the CPU rules' thresholds
 * at 100 %, which no heartbeat reaches: the same 20 rules compared on every heartbeat, and once every
 * constant condition has fired, no rule changes state (no statement at all).
 */
export type RuleMode = 'A' | 'B' | 'Q';

export interface RuleSwitch {
  /** metric_threshold rules enabled in B and Q. */
  thresholdRules: number;
  set(mode: RuleMode): Promise<void>;
}

/** Creates the rules (disabled) with the first channel attached to every rule; returns the switch between A and B. */
export async function installRules(call: Api, oneAgent: string): Promise<RuleSwitch> {
  const [channel] = await call<Array<{ id: number }>>('GET', '/notification-channels');
  if (!channel) throw new Error('no notification channel');
  for (const rule of createdRules(oneAgent)) await call('POST', '/alert-rules', { ...rule, enabled: false, channel_ids: [channel.id] });
  const rules = await call<StoredRule[]>('GET', '/alert-rules');
  const put = (r: StoredRule, mode: RuleMode) =>
    call('PUT', `/alert-rules/${r.id}`, {
      name: r.name,
      kind: r.kind,
      enabled: mode !== 'A',
      customer_id: r.customer_id,
      agent_id: r.agent_id,
      params: mode === 'Q' && r.params.metric === 'cpu_usage' ? { ...r.params, threshold: 100 } : r.params,
      channel_ids: [channel.id],
      reminder_minutes: r.reminder_minutes,
    });
  for (const r of rules) await put(r, 'A');
  const thresholdRules = rules.filter((r) => r.kind === 'metric_threshold').length;
  return {
    thresholdRules,
    async set(mode) {
      for (const r of rules) await put(r, mode);
    },
  };
}
