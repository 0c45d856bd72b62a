// Where a rule or a maintenance window applies: all agents, one customer's agents, or one agent. The
// draft keeps both choices, so switching back and forth loses nothing; only the chosen one is sent.
import type { Agent } from '../api/types';
import { CustomerOptions } from '../ui/customer-options';
import type { Scope } from './alert-types';
import { FieldError, invalidProps, type FieldErrors } from './field-errors';
import type { Directory } from './use-directory';

export interface ScopeDraft {
  mode: 'all' | 'customer' | 'agent';
  customerId: string;
  agentId: string;
}

export const ALL_AGENTS: ScopeDraft = { mode: 'all', customerId: '', agentId: '' };

export function scopeDraftOf(scope: Scope): ScopeDraft {
  if (scope.agent_id) return { mode: 'agent', customerId: '', agentId: scope.agent_id };
  if (scope.customer_id !== null) return { mode: 'customer', customerId: String(scope.customer_id), agentId: '' };
  return ALL_AGENTS;
}

export function scopeOf(draft: ScopeDraft): Scope {
  if (draft.mode === 'customer') {
    if (!draft.customerId) throw new Error('Applies to: choose a customer.');
    return { customer_id: Number(draft.customerId), agent_id: null };
  }
  if (draft.mode === 'agent') {
    if (!draft.agentId) throw new Error('Applies to: choose an agent.');
    return { customer_id: null, agent_id: draft.agentId };
  }
  return { customer_id: null, agent_id: null };
}

/** "All agents", "Customer 10001 Bäckerei", "Agent fw-1". */
export function scopeText(scope: Scope, directory: Directory): string {
  if (scope.agent_id) return `Agent ${directory.agentById.get(scope.agent_id)?.name ?? scope.agent_id.slice(0, 12)}`;
  if (scope.customer_id !== null) {
    const c = directory.customerById.get(scope.customer_id);
    return `Customer ${c ? `${c.number} ${c.name}` : scope.customer_id}`;
  }
  return 'All agents';
}

export function ScopePicker({ id, draft, onChange, directory, errors }: { id: string; draft: ScopeDraft; onChange: (d: ScopeDraft) => void; directory: Directory; errors: FieldErrors }) {
  return (
    <div className="row">
      <div className="field">
        <label htmlFor={`${id}-scope`}>Applies to</label>
        <select id={`${id}-scope`} value={draft.mode} onChange={(e) => onChange({ ...draft, mode: e.target.value as ScopeDraft['mode'] })}>
          <option value="all">All agents</option>
          <option value="customer">One customer</option>
          <option value="agent">One agent</option>
        </select>
      </div>
      {draft.mode === 'customer' && (
        <div className="field">
          <label htmlFor={`${id}-customer`}>Customer</label>
          <select id={`${id}-customer`} value={draft.customerId} onChange={(e) => onChange({ ...draft, customerId: e.target.value })} required {...invalidProps(errors, 'customer_id', `${id}-customer`)}>
            <CustomerOptions customers={directory.customers} emptyLabel="Choose a customer" />
          </select>
          <FieldError errors={errors} field="customer_id" id={`${id}-customer`} />
        </div>
      )}
      {draft.mode === 'agent' && (
        <div className="field">
          <label htmlFor={`${id}-agent`}>Agent</label>
          <select id={`${id}-agent`} value={draft.agentId} onChange={(e) => onChange({ ...draft, agentId: e.target.value })} required {...invalidProps(errors, 'agent_id', `${id}-agent`)}>
            <option value="">Choose an agent</option>
            {directory.agents.map((a: Agent) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
          </select>
          <FieldError errors={errors} field="agent_id" id={`${id}-agent`} />
        </div>
      )}
    </div>
  );
}
