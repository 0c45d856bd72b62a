// Every command sent to an agent, whichever feature sent it (REST, scripts, bulk actions, tasks, VPN),
// is announced with its outcome and round trip once answered: the one commander they all share is
// wrapped, so nothing is counted twice (the cluster's commander hands local agents to the hub, which is
// not wrapped). Prometheus listens; the wrapper knows nothing of it.
import { performance } from 'node:perf_hooks';
import { isAppError } from '../../platform/errors.js';
import type { AgentCommander } from './agent-commander.js';

export interface AnsweredCommand {
  command: string;
  /** `ok`, or the error's code in lower case (`agent_timeout`, …), or `error` for anything else. */
  outcome: string;
  seconds: number;
}

export function observeCommander<T extends AgentCommander>(commander: T, answered: (command: AnsweredCommand) => void): T {
  const request: AgentCommander['request'] = async (agentId, command, params, timeoutMs) => {
    const started = performance.now();
    let outcome = 'ok';
    try {
      return await commander.request(agentId, command, params, timeoutMs);
    } catch (err) {
      outcome = isAppError(err) ? err.code.toLowerCase() : 'error';
      throw err;
    } finally {
      answered({ command, outcome, seconds: (performance.now() - started) / 1000 });
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
