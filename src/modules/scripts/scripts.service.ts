// The script library (issue 33, Build 3): saved scripts for the whole MSP (changed by unscoped callers
// only), run on one agent through the same exec path as an ad hoc command, so every run is in the
// command history with the script's name.
import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../db/db-errors.js';
import type { Database, Platform } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import type { Page, PageRequest } from '../../platform/paging.js';
import type { AgentCommander } from '../agent-hub/agent-commander.js';
import type { AgentService } from '../agents/agents.service.js';
import { requireUnscoped, type Caller } from '../auth/caller.js';
import { originOf, sendExec, type CommandHistory, type ExecOrigin } from '../history/command-history.js';
import { renderScript } from './script-render.js';
import * as repo from './scripts.repo.js';

export type Script = repo.ScriptRow;

export interface ScriptRun {
  parameters?: Record<string, string> | undefined;
  timeout?: number | undefined;
}

/** A script ready for one agent: the command line and what the history names. */
export interface PreparedRun {
  command: string;
  timeout: number;
  script: { id: number; name: string };
}

const notFound = () => new AppError('NOT_FOUND', 'Script not found');
const duplicate = (err: unknown) => (isUniqueViolation(err) ? new AppError('CONFLICT', 'A script of that name exists (names ignore case)') : err);

export class ScriptService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly deps: {
      agents: AgentService;
      commander: AgentCommander;
      history: CommandHistory;
      /** A script's text or platforms changed, or it went: check sets that carry it must be sent again. */
      changed?: (id: number) => void;
    },
  ) {}

  list(page: PageRequest): Promise<Page<Script>> {
    return repo.listScripts(this.db, page);
  }

  async get(id: number): Promise<Script> {
    return (await repo.findScript(this.db, id)) ?? Promise.reject(notFound());
  }

  async create(caller: Caller, values: repo.ScriptValues): Promise<Script> {
    requireUnscoped(caller);
    return repo.insertScript(this.db, values, this.clock.now()).catch((err: unknown) => Promise.reject(duplicate(err)));
  }

  async update(caller: Caller, id: number, values: repo.ScriptValues): Promise<Script> {
    requireUnscoped(caller);
    const row = await repo.updateScript(this.db, id, values, this.clock.now()).catch((err: unknown) => Promise.reject(duplicate(err)));
    if (!row) throw notFound();
    this.deps.changed?.(id);
    return row;
  }

  async delete(caller: Caller, id: number): Promise<void> {
    requireUnscoped(caller);
    if (!(await repo.deleteScript(this.db, id))) throw notFound();
    this.deps.changed?.(id);
  }

  /**
   * The command line of a script for an agent of `platform`: 409 when the script does not apply to it,
   * 400 for an unknown parameter or a rendered command too long for the agent.
   */
  async prepare(id: number, platform: Platform | null, run: ScriptRun): Promise<PreparedRun> {
    const script = await this.get(id);
    if (platform === null) throw new AppError('CONFLICT', 'The agent has not reported its platform yet; the script cannot be matched to it');
    if (!script.platforms.includes(platform)) throw new AppError('CONFLICT', `Script "${script.name}" applies to ${script.platforms.join(', ')}, not ${platform}`);
    const given = run.parameters ?? {};
    const known = new Set(script.parameters.map((p) => p.name));
    const unknown = Object.keys(given).filter((name) => !known.has(name));
    if (unknown.length > 0) {
      throw new AppError('VALIDATION_ERROR', `Unknown parameter(s): ${unknown.join(', ')}`, { details: unknown.map((name) => ({ path: `parameters.${name}`, message: 'not a parameter of this script' })) });
    }
    const values = script.parameters.map((p) => [p.name, given[p.name] ?? p.default] as const);
    return { command: renderScript(script.shell, script.body, values), timeout: run.timeout ?? 60, script: { id: script.id, name: script.name } };
  }

  /** Runs a script on one agent and waits for its answer, as POST /agents/{id}/exec does. */
  async run(caller: Caller, id: number, agentId: string, run: ScriptRun) {
    const agent = await this.deps.agents.get(caller, agentId);
    const prepared = await this.prepare(id, agent.platform, run);
    return this.execute(originOf(caller, 'script', prepared.script), agent.id, prepared);
  }

  /** Sends a prepared script through the command history. */
  execute(origin: ExecOrigin, agentId: string, prepared: PreparedRun) {
    const { command, timeout } = prepared;
    return this.deps.history.run(origin, agentId, command, timeout, () => sendExec(this.deps.commander, agentId, command, timeout));
  }
}
