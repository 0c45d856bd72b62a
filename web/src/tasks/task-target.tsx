// Who a task is for: one agent, or a group resolved at every run (issue 33): a customer, a platform
// and/or a tag. A group runs as a bulk action, waiting for agents that are away.
import { useId } from 'react';
import { PLATFORM_LABELS, type Agent, type Customer, type Platform } from '../api/types';
import { Link } from '../router';
import { CustomerOptions } from '../ui/customer-options';
import { byNaturalName } from '../ui/natural-order';
import { num, str, type Obj } from '../ui/safe-data';
import type { TaskTarget } from './task-types';

export interface TargetDraft {
  mode: 'agent' | 'group';
  agentId: string;
  customerId: string;
  platform: string;
  tag: string;
}

export const EMPTY_TARGET: TargetDraft = { mode: 'agent', agentId: '', customerId: '', platform: '', tag: '' };

/** The body fields of the target: agent_id, or target with the group's non-empty parts. */
export function targetFields(d: TargetDraft): { agent_id: string } | { target: TaskTarget } {
  if (d.mode === 'agent') return { agent_id: d.agentId };
  const target: TaskTarget = {};
  if (d.customerId) target.customer_id = Number(d.customerId);
  if (d.platform) target.platform = d.platform as Platform;
  if (d.tag.trim()) target.tag = d.tag.trim();
  if (Object.keys(target).length === 0) throw new Error('A group needs a customer, a platform or a tag.');
  return { target };
}

export function TargetFields({ draft, onChange, agents, customers }: { draft: TargetDraft; onChange: (d: TargetDraft) => void; agents: readonly Agent[] | undefined; customers: readonly Customer[] }) {
  const ids = useId();
  const set = (change: Partial<TargetDraft>) => onChange({ ...draft, ...change });
  return (
    <div className="row">
      <div className="field">
        <label htmlFor={`${ids}-mode`}>For</label>
        <select id={`${ids}-mode`} value={draft.mode} onChange={(e) => set({ mode: e.target.value as TargetDraft['mode'] })}>
          <option value="agent">One agent</option>
          <option value="group">A group of agents</option>
        </select>
      </div>
      {draft.mode === 'agent' ? (
        <div className="field">
          {/* Labels beside their selects, not around them: a wrapping label's name would include every option's text. */}
          <label htmlFor={`${ids}-agent`}>Agent</label>
          <select id={`${ids}-agent`} value={draft.agentId} onChange={(e) => set({ agentId: e.target.value })} required>
            <option value="">{agents ? 'Choose an agent' : 'Loading agents…'}</option>
            {[...(agents ?? [])].sort(byNaturalName).map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
          </select>
        </div>
      ) : (
        <>
          <div className="field">
            <label htmlFor={`${ids}-customer`}>Customer</label>
            <select id={`${ids}-customer`} value={draft.customerId} onChange={(e) => set({ customerId: e.target.value })}>
              <CustomerOptions customers={customers} emptyLabel="Any" />
            </select>
          </div>
          <div className="field">
            <label htmlFor={`${ids}-platform`}>Platform</label>
            <select id={`${ids}-platform`} value={draft.platform} onChange={(e) => set({ platform: e.target.value })}>
              <option value="">Any</option>
              {(Object.keys(PLATFORM_LABELS) as Platform[]).map((p) => (
                <option key={p} value={p}>
                  {PLATFORM_LABELS[p]}
                </option>
              ))}
            </select>
          </div>
          <label>
            Tag
            <input value={draft.tag} onChange={(e) => set({ tag: e.target.value })} maxLength={40} placeholder="any" />
          </label>
          <span className="muted">Resolved at every run; agents that are away are waited for up to 24 h.</span>
        </>
      )}
    </div>
  );
}

/**
 * A group target in words, with a link to its customer. The API describes a task's target as any object
 * (it is stored JSON), so each field is read for what it is.
 */
export function TargetText({ target, customers }: { target: Obj; customers: readonly Customer[] | undefined }) {
  const customerId = num(target.customer_id);
  const platform = str(target.platform);
  const tag = str(target.tag);
  const customer = customers?.find((c) => c.id === customerId);
  return (
    <span data-testid="task-target">
      Group:{' '}
      {customerId !== undefined && (customer ? <Link to={`/customers/${customer.id}`}>{customer.name}</Link> : `customer #${customerId}`)}
      {platform && ` ${platform in PLATFORM_LABELS ? PLATFORM_LABELS[platform as Platform] : platform}`}
      {tag && ` tagged "${tag}"`}
    </span>
  );
}
