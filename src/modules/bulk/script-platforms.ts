// A script runs on the platforms it names (scripts.service.ts refuses the others with 409). A bulk
// script on a mixed target used to start anyway and fail on every agent of another platform, one by
// one (issue 57, item 20). The check is done before anything starts: a preview says which agents could
// not run it, and making the action refuses them unless the caller asks to skip them.
import type { Platform } from '../../db/schema.js';
import { AppError } from '../../platform/errors.js';
import type { ScriptService } from '../scripts/scripts.service.js';

export interface TargetAgent {
  id: string;
  name: string;
  customer_id: number | null;
  platform: Platform | null;
}

export interface PlatformCheck {
  /** The script's platforms; null for actions that are not scripts (every platform runs them). */
  appliesTo: Platform[] | null;
  scriptName: string | null;
  /** Agents whose platform the script does not name. Agents not registered yet (no platform) run it if they turn out to match. */
  unsupported: TargetAgent[];
}

export async function checkScriptPlatforms(
  scripts: Pick<ScriptService, 'get'>,
  action: string,
  params: Record<string, unknown>,
  targets: readonly TargetAgent[],
): Promise<PlatformCheck> {
  if (action !== 'script') return { appliesTo: null, scriptName: null, unsupported: [] };
  const script = await scripts.get(Number(params.script_id));
  const unsupported = targets.filter((agent) => agent.platform !== null && !script.platforms.includes(agent.platform));
  return { appliesTo: script.platforms, scriptName: script.name, unsupported };
}

/** The targets the action runs on: 400 when some cannot run the script and the caller did not ask to skip them. */
export function supportedTargets<T extends TargetAgent>(targets: readonly T[], check: PlatformCheck, skipUnsupported: boolean): T[] {
  if (check.unsupported.length === 0) return [...targets];
  const skipped = new Set(check.unsupported.map((a) => a.id));
  const rest = targets.filter((a) => !skipped.has(a.id));
  const named = check.unsupported.slice(0, 5).map((a) => `${a.name} (${a.platform})`).join(', ') + (check.unsupported.length > 5 ? ', …' : '');
  const runsOn = `Script "${check.scriptName}" runs on ${check.appliesTo!.join(', ')}`;
  if (rest.length === 0) throw targetError(`${runsOn}; none of the ${targets.length} agents does: ${named}`);
  if (!skipUnsupported) {
    throw targetError(`${runsOn}; ${check.unsupported.length} of the ${targets.length} agents do not: ${named}. Send skip_unsupported: true to run it on the other ${rest.length}`);
  }
  return rest;
}

const targetError = (message: string) => new AppError('VALIDATION_ERROR', message, { details: [{ path: 'target', message }] });
