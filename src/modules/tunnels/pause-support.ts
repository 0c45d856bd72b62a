// Which connected agents can pause one tunnel session (the optional tunnel_pause / tunnel_resume
// commands). The server learns it from an agent's first answer to tunnel_pause and keeps it for the life
// of that socket: success means yes; `success:false` (an older agent's "unknown command") or no answer
// within PROBE_TIMEOUT_MS means no. Pauses and resumes of one session go out in the order asked for,
// also while the first answer is awaited, so an agent never ends up holding a session nobody resumes.
import { AppError } from '../../platform/errors.js';
import type { Logger } from '../../platform/logger.js';
import type { AgentCommander } from '../agent-hub/agent-commander.js';

/** How long the first tunnel_pause may go unanswered before the agent counts as unable to pause. */
export const PROBE_TIMEOUT_MS = 5_000;
/** Later pauses and resumes are fire and forget; this only bounds their entries in the hub. */
const COMMAND_TIMEOUT_MS = 15_000;

interface Support {
  state: 'probing' | 'yes' | 'no';
  /** Settles with the answer to the first tunnel_pause. */
  answer: Promise<boolean>;
}

export class PauseSupport {
  readonly #agents = new Map<string, Support>();

  constructor(
    private readonly hub: AgentCommander,
    private readonly logger: Logger,
  ) {}

  /** True or false once the agent's socket has told; null before (or while asking). */
  known(agentId: string): boolean | null {
    const support = this.#agents.get(agentId);
    return support === undefined || support.state === 'probing' ? null : support.state === 'yes';
  }

  /** Asks the agent to stop reading the session's target; resolves false when it cannot. */
  async pause(agentId: string, sessionId: string): Promise<boolean> {
    const support = this.#agents.get(agentId);
    if (!support) return this.#probe(agentId, sessionId).answer; // the first pause is the question
    if (support.state === 'no') return false;
    if (support.state === 'yes') {
      this.#send(agentId, 'tunnel_pause', sessionId);
      return true;
    }
    const able = await support.answer;
    if (able) this.#send(agentId, 'tunnel_pause', sessionId);
    return able;
  }

  /** Lets the agent read the session's target again (after a pause that it accepted). */
  resume(agentId: string, sessionId: string): void {
    const support = this.#agents.get(agentId);
    if (!support || support.state === 'no') return;
    if (support.state === 'yes') this.#send(agentId, 'tunnel_resume', sessionId);
    // Still asking: behind any pause that waits for the same answer (reactions run in order).
    else void support.answer.then((able) => able && this.#send(agentId, 'tunnel_resume', sessionId));
  }

  /** The agent's socket is gone or replaced: what it could do says nothing about the next one. */
  forget(agentId: string): void {
    this.#agents.delete(agentId);
  }

  #probe(agentId: string, sessionId: string): Support {
    const support: Support = { state: 'probing', answer: Promise.resolve(false) };
    const settle = (able: boolean) => {
      if (this.#agents.get(agentId) === support) support.state = able ? 'yes' : 'no';
      return able;
    };
    support.answer = this.hub.request(agentId, 'tunnel_pause', { session_id: sessionId }, PROBE_TIMEOUT_MS).then(
      () => settle(true),
      (err: unknown) => {
        if (!(err instanceof AppError) || (err.code !== 'AGENT_ERROR' && err.code !== 'AGENT_TIMEOUT')) {
          // Disconnected or stopping: no answer about this agent; the next socket is asked again.
          if (this.#agents.get(agentId) === support) this.#agents.delete(agentId);
          return false;
        }
        this.logger.info(
          { agentId, reason: err.message },
          'this agent cannot pause a tunnel session (no tunnel_pause): a client that stops reading is cut once its backlog is full',
        );
        return settle(false);
      },
    );
    this.#agents.set(agentId, support);
    return support;
  }

  #send(agentId: string, command: 'tunnel_pause' | 'tunnel_resume', sessionId: string): void {
    this.hub.request(agentId, command, { session_id: sessionId }, COMMAND_TIMEOUT_MS).catch(() => undefined);
  }
}
