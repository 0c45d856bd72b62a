// The script library's shapes as the API sends them (GET /scripts, POST/PUT /scripts, POST /scripts/{id}/run).
import type { Platform } from '../api/types';

export type Shell = 'sh' | 'bash' | 'powershell' | 'cmd';
export const SHELLS: readonly Shell[] = ['sh', 'bash', 'powershell', 'cmd'];
export const SHELL_LABELS: Record<Shell, string> = { sh: 'sh', bash: 'bash', powershell: 'PowerShell', cmd: 'cmd' };
export const PLATFORMS: readonly Platform[] = ['freebsd', 'linux', 'windows'];

export interface ScriptParameter {
  name: string;
  default: string;
  description: string;
}

export interface Script {
  id: number;
  name: string;
  description: string;
  shell: Shell;
  body: string;
  parameters: ScriptParameter[];
  platforms: Platform[];
  created_at: string;
  updated_at: string;
}

export interface ScriptRunResult {
  exit_code: number | null;
  stdout: string;
  stderr: string;
  history_id: number | null;
}

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
