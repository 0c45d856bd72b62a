// Services through systemd (a Linux device whose PID 1 is systemd): list-units for the state,
// list-unit-files for the start mode, `systemctl <action>` for a change. JSON output where systemctl
// has it (systemd 246 and later), otherwise its plain columns.
import type { DeviceService } from '../../modules/agent-hub/device-protocol.js';
import { CommandError } from '../commands/command-error.js';
import { outputOf, runTool } from './run-tool.js';

type State = DeviceService['state'];
type StartMode = DeviceService['start_mode'];

const STATES: Record<string, State> = { active: 'running', reloading: 'running', inactive: 'stopped', failed: 'failed', activating: 'starting', deactivating: 'stopping' };
const MODES: Record<string, StartMode> = { enabled: 'auto', 'enabled-runtime': 'auto', alias: 'auto', disabled: 'disabled', masked: 'disabled', 'masked-runtime': 'disabled', static: 'manual', indirect: 'manual', generated: 'auto', transient: 'manual' };

const unitName = (unit: string) => unit.replace(/\.service$/, '');

async function systemctl(args: string[]): Promise<string> {
  const result = await runTool('systemctl', ['--no-pager', '--no-legend', ...args]);
  if (result.code !== 0) throw new CommandError(`systemctl ${args.join(' ')} failed: ${outputOf(result)}`);
  return result.stdout;
}

/** Rows of a systemctl listing: JSON where supported, else whitespace columns named `columns`. */
async function rows(args: string[], columns: string[]): Promise<Array<Record<string, string>>> {
  try {
    const parsed: unknown = JSON.parse(await systemctl([...args, '--output=json']));
    if (Array.isArray(parsed)) return parsed as Array<Record<string, string>>;
  } catch {
    // older systemd: the plain columns below
  }
  return (await systemctl([...args, '--plain']))
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => {
      const parts = line.trim().split(/\s+/);
      const row: Record<string, string> = {};
      columns.forEach((name, i) => (row[name] = i === columns.length - 1 ? parts.slice(i).join(' ') : (parts[i] ?? '')));
      return row;
    });
}

export async function systemdServices(): Promise<DeviceService[]> {
  const [units, files] = await Promise.all([
    rows(['list-units', '--type=service', '--all'], ['unit', 'load', 'active', 'sub', 'description']),
    rows(['list-unit-files', '--type=service'], ['unit_file', 'state', 'preset']),
  ]);
  const modes = new Map(files.map((f) => [unitName(f.unit_file ?? ''), MODES[f.state ?? ''] ?? 'unknown']));
  const services = new Map<string, DeviceService>();
  for (const u of units) {
    const name = unitName(u.unit ?? '');
    if (!name || u.load === 'not-found') continue;
    services.set(name, { name, description: u.description || null, state: STATES[u.active ?? ''] ?? 'unknown', start_mode: modes.get(name) ?? 'unknown' });
  }
  // Installed but never loaded (disabled units are often not listed by list-units).
  for (const [name, mode] of modes) {
    if (!services.has(name) && !name.endsWith('@')) services.set(name, { name, description: null, state: 'stopped', start_mode: mode });
  }
  return [...services.values()].sort((a, b) => a.name.localeCompare(b.name));
}

export async function systemdService(name: string): Promise<DeviceService> {
  const text = await systemctl(['show', `${name}.service`, '--property=Description,ActiveState,UnitFileState,LoadState']);
  const props = Object.fromEntries(text.split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
  if (props.LoadState === 'not-found') throw new CommandError(`no such service ${name}`);
  return { name, description: props.Description || null, state: STATES[props.ActiveState ?? ''] ?? 'unknown', start_mode: MODES[props.UnitFileState ?? ''] ?? 'unknown' };
}

export async function systemdAction(name: string, action: string): Promise<string> {
  await systemdService(name); // an unknown name is refused before anything runs
  const result = await runTool('systemctl', ['--no-pager', action, `${name}.service`], { timeoutMs: 55_000 });
  if (result.code !== 0) throw new CommandError(`systemctl ${action} ${name} failed (exit ${result.code}): ${outputOf(result)}`);
  return outputOf(result);
}
