// Runs one agent command through the API and tracks it for the page: busy with the seconds waited (an
// update may take half an hour, and the technician must see that it is still waiting), then the
// agent's answer or the error.
import { useEffect, useRef, useState } from 'react';
import type { ApiBody, ApiMethod, ApiPath, ApiRequest } from '../../api/api-types';
import { api } from '../../api/client';

/** The API's POST operations on one agent (POST /agents/{id}/<command>): what each takes and answers. */
type AgentCommands = {
  [P in ApiPath as P extends `/agents/{id}/${infer Command}` ? ('post' extends ApiMethod<P> ? Command : never) : never]: {
    body: ApiRequest<P, 'post' & ApiMethod<P>>;
    answer: ApiBody<P, 'post' & ApiMethod<P>>;
  };
};
export type AgentCommand = keyof AgentCommands;

export interface CommandState<T, Body = unknown> {
  busy: boolean;
  /** Seconds since the command was sent, while it runs. */
  elapsed: number;
  result: T | undefined;
  error: unknown;
  run: (body: Body) => Promise<void>;
}

export function useAgentCommand<C extends AgentCommand>(agentId: string, command: C): CommandState<AgentCommands[C]['answer'], AgentCommands[C]['body']> {
  type T = AgentCommands[C]['answer'];
  const [busy, setBusy] = useState(false);
  const [elapsed, setElapsed] = useState(0);
  const [result, setResult] = useState<T>();
  const [error, setError] = useState<unknown>();
  const mounted = useRef(true);
  useEffect(() => () => void (mounted.current = false), []);

  useEffect(() => {
    if (!busy) return;
    const started = Date.now();
    const timer = setInterval(() => setElapsed(Math.floor((Date.now() - started) / 1000)), 1000);
    return () => clearInterval(timer);
  }, [busy]);

  const run = async (body: AgentCommands[C]['body']) => {
    setBusy(true);
    setElapsed(0);
    setResult(undefined);
    setError(undefined);
    try {
      const answer = await api<T>(`/agents/${encodeURIComponent(agentId)}/${command}`, { method: 'POST', body });
      if (mounted.current) setResult(answer);
    } catch (err) {
      if (mounted.current) setError(err);
    } finally {
      if (mounted.current) setBusy(false);
    }
  };
  return { busy, elapsed, result, error, run };
}

export function waitingText(busy: boolean, elapsed: number): string | null {
  return busy ? `Waiting for the agent… ${elapsed} s` : null;
}
