// The script library's shapes as the API sends them (GET /scripts, POST/PUT /scripts, POST /scripts/{id}/run).
import { allOf, type ApiBody, type ApiItem } from '../api/api-types';
import type { Platform } from '../api/types';

export type Script = ApiItem<'/scripts'>;
export type ScriptParameter = Script['parameters'][number];
export type ScriptRunResult = ApiBody<'/scripts/{id}/run', 'post'>;

export type Shell = Script['shell'];
export const SHELLS = allOf<Shell>()(['sh', 'bash', 'powershell', 'cmd']);
export const SHELL_LABELS: Record<Shell, string> = { sh: 'sh', bash: 'bash', powershell: 'PowerShell', cmd: 'cmd' };
export const PLATFORMS = allOf<Platform>()(['freebsd', 'linux', 'windows']);

/** How a parameter reaches the script in its shell: shown beside the parameter rows so nobody guesses. */
export function parameterReference(shell: Shell, name: string): string {
  if (shell === 'powershell') return `$env:${name}`;
  if (shell === 'cmd') return `%${name}%`;
  return `$${name}`;
}

/** Each parameter's default, as the starting values of a run form. */
export function defaultValues(script: Script | undefined): Record<string, string> {
  return Object.fromEntries((script?.parameters ?? []).map((p) => [p.name, p.default]));
}
