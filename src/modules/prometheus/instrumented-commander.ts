// Counts every command sent to an agent and times its round trip, whichever feature sent it (REST,
// scripts, bulk actions, tasks, VPN, guests): the one commander they all share is wrapped, so nothing
// is counted twice (the cluster's commander hands local agents to the hub, which is not wrapped).
import { isAppError } from '../../platform/errors.js';
import type { AgentCommander } from '../agent-hub/agent-commander.js';
import type { ServerMetrics } from './server-metrics.js';

export function instrumentCommander<T extends AgentCommander>(commander: T, metrics: ServerMetrics): T {
  const request: AgentCommander['request'] = async (agentId, command, params, timeoutMs) => {
    const end = metrics.commandSeconds.startTimer({ command });
    try {
      const data = await commander.request(agentId, command, params, timeoutMs);
      metrics.commands.inc({ command, outcome: 'ok' });
      return data;
    } catch (err) {
      metrics.commands.inc({ command, outcome: isAppError(err) ? err.code.toLowerCase() : 'error' });
      throw err;
    } finally {
      end();
    }
  };
  // Everything else (isConnected, nextConnection, …) is the commander's own, bound to it (its private
  // fields) once: isConnected is asked for every waiting bulk result on every pass.
  // Keyed by the function itself: a property set anew is bound anew.
  const bound = new WeakMap<object, unknown>();
  return new Proxy(commander, {
    get(target, property) {
      if (property === 'request') return request;
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      if (!bound.has(value)) bound.set(value, (value as (...args: unknown[]) => unknown).bind(target));
      return bound.get(value);
    },
  });
}
