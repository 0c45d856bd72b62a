// Before a bulk script starts, which agents of the target it cannot run on (issue 57, item 20): the
// server's preview (POST /bulk-actions/preview) names them, and this note says so in the console's
// words (Firewall, Hypervisor, Windows), with how many will run it. Starting then skips them.
import type { ApiBody, ApiRequest } from '../api/api-types';
import { api } from '../api/client';
import { PLATFORM_LABELS, type Platform } from '../api/types';
import { useResource } from '../use-resource';
import type { BulkTarget } from './bulk-types';

export type BulkPreview = ApiBody<'/bulk-actions/preview', 'post'>;

const PLURALS: Record<Platform, string> = { freebsd: 'Firewalls', linux: 'Hypervisors', windows: 'Windows machines' };

/** "Firewalls and Hypervisors" */
export function platformWords(platforms: readonly Platform[]): string {
  const words = platforms.map((p) => PLURALS[p]);
  return words.length <= 1 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`;
}

/** The preview of a script on `target`, once a script is chosen (undefined before). */
export function useScriptPreview(target: BulkTarget, scriptId: string) {
  return useResource(
    (signal) => (scriptId ? api<BulkPreview>('/bulk-actions/preview', { method: 'POST', body: { action: 'script', params: { script_id: Number(scriptId) }, target } satisfies ApiRequest<'/bulk-actions/preview', 'post'>, signal }) : Promise.resolve(undefined)),
    [scriptId, JSON.stringify(target)],
  );
}

export function ScriptPlatformNote({ preview }: { preview: BulkPreview }) {
  if (preview.unsupported_count === 0 || !preview.applies_to) return null;
  const runs = preview.agents - preview.unsupported_count;
  const names = preview.unsupported.slice(0, 5).map((a) => `${a.agent_name} (${PLATFORM_LABELS[a.platform]})`);
  const more = preview.unsupported_count > names.length ? ` and ${preview.unsupported_count - names.length} more` : '';
  return (
    <p className={`banner ${runs === 0 ? 'banner-error' : 'banner-warn'}`} role="status" data-testid="script-platform-note">
      “{preview.script_name}” runs on {platformWords(preview.applies_to)} only.{' '}
      {runs === 0
        ? `None of the ${preview.agents} agents can run it.`
        : `${preview.unsupported_count} of the ${preview.agents} agents cannot run it and will be skipped: ${names.join(', ')}${more}. It runs on the other ${runs}.`}
    </p>
  );
}
