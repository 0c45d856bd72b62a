// The conditions evaluated on a timer (issue 31), one strategy per rule kind: what is wrong right now
// with the agents a rule covers. Each is one query per rule, however many agents there are; the
// reconciler turns the answer into fired and resolved alerts. Threshold and task rules are evaluated as
// their data arrives instead (threshold-evaluator.ts, task-outcomes.ts).
import { sql, type Kysely } from 'kysely';
import type { AlertRuleKind, Database } from '../../db/schema.js';
import { ONLINE_BELOW_MS, STALE_UP_TO_MS } from '../agents/agent-status.js';
import { coversAgent, type ActiveRule } from './active-rules.repo.js';
import type { Finding } from './alert-engine.js';

type Db = Kysely<Database>;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export type PeriodicKind = Extract<AlertRuleKind, 'agent_offline' | 'certificate_expiry' | 'backup_age' | 'update_pending' | 'check_state'>;

type Condition<K extends PeriodicKind> = (db: Db, rule: ActiveRule<K>, now: Date) => Promise<Finding[]>;

export const utc = (d: Date) => `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
const round1 = (n: number) => Math.round(n * 10) / 10;

/** No heartbeat for the rule's minutes, and at least long enough to be in its status (stale: 2 min, offline: over 5). */
const agentOffline: Condition<'agent_offline'> = async (db, rule, now) => {
  const { minutes, status } = rule.params;
  const ageAtLeast = Math.max(minutes * MINUTE, status === 'stale' ? ONLINE_BELOW_MS : STALE_UP_TO_MS + 1);
  const cutoff = new Date(now.getTime() - ageAtLeast);
  const { rows } = await sql<{ id: string; last_heartbeat: Date }>`
    select a.id, a.last_heartbeat from agents a
    where a.last_heartbeat is not null and a.last_heartbeat <= ${cutoff} and ${coversAgent(rule)}`.execute(db);
  return rows.map((r) => {
    const silentMinutes = Math.floor((now.getTime() - r.last_heartbeat.getTime()) / MINUTE);
    return {
      agentId: r.id,
      label: '',
      summary: `${status === 'stale' ? 'Stale or offline' : 'Offline'}: no heartbeat for ${silentMinutes} min (limit ${minutes} min), last at ${utc(r.last_heartbeat)}`,
      value: silentMinutes,
      threshold: minutes,
      since: r.last_heartbeat,
    };
  });
};

/**
 * Certificates the agent reports in use that expire within the rule's days (or have expired). The
 * database returns only certificates in use whose `valid_to` may fall within the window: an ISO date
 * (YYYY-MM-DD…) more than two days after it cannot, whatever its time and offset, so it stays behind (the
 * whole fleet's certificate lists, parsed into objects every minute, were the largest thing a 10,000-agent
 * server's young generation had to copy, bench/README.md 2026-11-27). Whether one is in the window is
 * still decided here, with JavaScript's reading of the date, as the agents' own texts are any format.
 */
const certificateExpiry: Condition<'certificate_expiry'> = async (db, rule, now) => {
  const windowMs = rule.params.days * DAY;
  const latestDay = new Date(now.getTime() + windowMs + 2 * DAY).toISOString().slice(0, 10);
  const { rows } = await sql<{ id: string; ord: number; name: string | null; valid_to: string }>`
    select a.id, c.ord::int as ord, case when jsonb_typeof(c.cert->'name') = 'string' then c.cert->>'name' end as name, c.cert->>'valid_to' as valid_to
    from agents a join agent_attention_facts f on f.agent_id = a.id
    cross join lateral jsonb_array_elements(f.certificates) with ordinality as c(cert, ord)
    where c.cert->'in_use' = 'true'::jsonb and jsonb_typeof(c.cert->'valid_to') = 'string'
      and (c.cert->>'valid_to' !~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}' or left(c.cert->>'valid_to', 10) <= ${latestDay})
      and ${coversAgent(rule)}
    order by a.id, c.ord`.execute(db);
  const findings: Finding[] = [];
  for (const cert of rows) {
    const validTo = new Date(cert.valid_to);
    if (Number.isNaN(validTo.getTime()) || validTo.getTime() - now.getTime() > windowMs) continue;
    const name = cert.name !== null && cert.name.length > 0 ? cert.name.slice(0, 200) : `certificate ${cert.ord}`;
    const daysLeft = (validTo.getTime() - now.getTime()) / DAY;
    const when = daysLeft < 0 ? `expired on ${utc(validTo)}` : `expires on ${utc(validTo)} (in ${round1(daysLeft)} days)`;
    findings.push({
      agentId: cert.id,
      label: name,
      summary: `Certificate "${name}" in use ${when}; limit ${rule.params.days} days`,
      value: round1(daysLeft),
      threshold: rule.params.days,
      since: new Date(Math.min(now.getTime(), validTo.getTime() - windowMs)),
    });
  }
  return findings;
};

/** The newest configuration backup older than the rule's days; firewalls without any backup count too. */
const backupAge: Condition<'backup_age'> = async (db, rule, now) => {
  const cutoff = new Date(now.getTime() - rule.params.days * DAY);
  const { rows } = await sql<{ id: string; newest: Date | null; created_at: Date }>`
    select a.id, b.newest, a.created_at from agents a
    left join (select agent_id, max(created_at) as newest from config_backups group by agent_id) b on b.agent_id = a.id
    where ${coversAgent(rule)}
      and ((b.newest is not null and b.newest < ${cutoff}) or (b.newest is null and a.platform = 'freebsd' and a.created_at < ${cutoff}))`.execute(db);
  return rows.map((r) => {
    const from = r.newest ?? r.created_at;
    const ageDays = round1((now.getTime() - from.getTime()) / DAY);
    return {
      agentId: r.id,
      label: '',
      summary: r.newest
        ? `Newest configuration backup is ${ageDays} days old (from ${utc(r.newest)}); limit ${rule.params.days} days`
        : `No configuration backup in the ${ageDays} days since the firewall was registered; limit ${rule.params.days} days`,
      value: ageDays,
      threshold: rule.params.days,
      since: new Date(from.getTime() + rule.params.days * DAY),
    };
  });
};

/** An update requested more than the rule's hours ago that the agent has not applied (the flag is still set). */
const updatePending: Condition<'update_pending'> = async (db, rule, now) => {
  const cutoff = new Date(now.getTime() - rule.params.hours * HOUR);
  const { rows } = await sql<{ id: string; update_requested_at: Date; agent_version: string | null }>`
    select a.id, a.update_requested_at, a.agent_version from agents a
    where a.update_requested and a.update_requested_at <= ${cutoff} and ${coversAgent(rule)}`.execute(db);
  return rows.map((r) => {
    const hours = round1((now.getTime() - r.update_requested_at.getTime()) / HOUR);
    return {
      agentId: r.id,
      label: '',
      summary: `Update requested ${hours} h ago (${utc(r.update_requested_at)}) not applied yet${r.agent_version ? `; agent still reports ${r.agent_version}` : ''}; limit ${rule.params.hours} h`,
      value: hours,
      threshold: rule.params.hours,
      since: new Date(r.update_requested_at.getTime() + rule.params.hours * HOUR),
    };
  });
};

const STATE_CODES = { warning: 1, critical: 2, unknown: 3 } as const;
const STATE_WORDS = ['OK', 'WARNING', 'CRITICAL', 'UNKNOWN'];

/**
 * Checks (issue 61) in one of the rule's states for at least for_seconds: one alert per agent and check
 * (the label names the check and the start of its id, so two checks of one name stay apart).
 */
const checkState: Condition<'check_state'> = async (db, rule, now) => {
  const { states, policy_id: policyId, check_id: checkId, for_seconds: forSeconds } = rule.params;
  const cutoff = new Date(now.getTime() - forSeconds * 1000);
  const { rows } = await sql<{ agent_id: string; check_id: string; name: string; policy_name: string; state: number; output: string; last_change_at: Date }>`
    select s.agent_id, s.check_id, c.name, p.name as policy_name, s.state, s.output, s.last_change_at
    from check_states s join agents a on a.id = s.agent_id
    join policy_checks c on c.id = s.check_id join check_policies p on p.id = c.policy_id
    where s.state in (${sql.join(states.map((st) => STATE_CODES[st]))}) and s.last_change_at <= ${cutoff} and ${coversAgent(rule)}
      ${policyId === undefined ? sql`` : sql`and p.id = ${policyId}`} ${checkId === undefined ? sql`` : sql`and c.id = ${checkId}`}`.execute(db);
  return rows.map((r) => ({
    agentId: r.agent_id,
    label: `${r.name} · ${r.check_id.slice(0, 8)}`,
    summary: `Check "${r.name}" (${r.policy_name}) ${STATE_WORDS[r.state] ?? 'UNKNOWN'} since ${utc(r.last_change_at)}: ${r.output.split('\n')[0]!.slice(0, 300)}`,
    value: r.state,
    threshold: null,
    since: new Date(r.last_change_at.getTime() + forSeconds * 1000),
  }));
};

export const PERIODIC_CONDITIONS: { [K in PeriodicKind]: Condition<K> } = {
  agent_offline: agentOffline,
  certificate_expiry: certificateExpiry,
  backup_age: backupAge,
  update_pending: updatePending,
  check_state: checkState,
};
