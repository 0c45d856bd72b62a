// The customers and agents the alerting pages name and offer as choices (scope pickers, filters),
// loaded once per page: both change far more slowly than alerts do.
import { useMemo } from 'react';
import { api } from '../api/client';
import type { Agent, Customer } from '../api/types';
import { byNaturalName } from '../ui/natural-order';
import { useResource } from '../use-resource';

export interface Directory {
  customers: readonly Customer[];
  agents: readonly Agent[];
  customerById: ReadonlyMap<number, Customer>;
  agentById: ReadonlyMap<string, Agent>;
  error: Error | undefined;
}


export function useDirectory(): Directory {
  const customers = useResource((signal) => api<Customer[]>('/customers', { signal }), []);
  const agents = useResource((signal) => api<Agent[]>('/agents', { signal }), []);
  return useMemo(() => {
    const c = [...(customers.data ?? [])].sort((a, b) => a.number.localeCompare(b.number, undefined, { numeric: true }));
    const a = [...(agents.data ?? [])].sort(byNaturalName);
    return {
      customers: c,
      agents: a,
      customerById: new Map(c.map((x) => [x.id, x])),
      agentById: new Map(a.map((x) => [x.id, x])),
      error: customers.error ?? agents.error,
    };
  }, [customers.data, agents.data, customers.error, agents.error]);
}
