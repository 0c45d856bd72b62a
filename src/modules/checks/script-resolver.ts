// Script checks that name a script of the library (script_id) reach the agent with the script itself
// ({shell, body}), read once per computation of sets. A script deleted from the library leaves the check
// without one: the agent reports it UNKNOWN, which shows the operator what to fix.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { PolicyForAgents } from './effective-checks.js';

export class ScriptResolver {
  private constructor(private readonly scripts: ReadonlyMap<number, { shell: string; body: string }>) {}

  static async load(db: Kysely<Database>, policies: readonly PolicyForAgents[]): Promise<ScriptResolver> {
    const ids = [...new Set(policies.flatMap((p) => p.checks.flatMap((c) => (typeof c.params.script_id === 'number' ? [c.params.script_id] : []))))];
    if (ids.length === 0) return new ScriptResolver(new Map());
    const rows = await db.selectFrom('scripts').select(['id', 'shell', 'body']).where('id', 'in', ids).execute();
    return new ScriptResolver(new Map(rows.map((r) => [r.id, { shell: r.shell, body: r.body }])));
  }

  resolve(params: Record<string, unknown>): Record<string, unknown> {
    if (typeof params.script_id !== 'number') return params;
    const script = this.scripts.get(params.script_id);
    return script ? { ...params, script } : params;
  }
}
