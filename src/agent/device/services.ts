// svc_list and svc_action (issue 59, capability `services`): the device's service manager is systemd
// when it is Linux's PID 1, else Debian's init scripts; rc.d on FreeBSD; the service control manager
// on Windows. A name is checked before any tool sees it (no path, no shell metacharacter), every tool
// runs from an argument array, and the answer to an action is the service as it is afterwards.
import { readFile } from 'node:fs/promises';
import type { CommandParams } from '../../modules/agent-hub/agent-protocol.js';
import type { DeviceService } from '../../modules/agent-hub/device-protocol.js';
import { CommandError } from '../commands/command-error.js';
import { rcAction, rcService, rcServices, scmAction, scmService, scmServices } from './svc-other.js';
import { systemdAction, systemdService, systemdServices } from './svc-systemd.js';
import { sysvAction, sysvService, sysvServices } from './svc-sysv.js';

type Manager = 'systemd' | 'sysv' | 'rc.d' | 'scm';

interface ServiceManager {
  list(): Promise<DeviceService[]>;
  one(name: string): Promise<DeviceService>;
  act(name: string, action: string): Promise<string>;
}

const MANAGERS: Record<Manager, ServiceManager> = {
  systemd: { list: systemdServices, one: systemdService, act: systemdAction },
  sysv: { list: sysvServices, one: sysvService, act: sysvAction },
  'rc.d': { list: rcServices, one: rcService, act: rcAction },
  scm: { list: scmServices, one: scmService, act: scmAction },
};

/** Service names of every manager: letters, digits and . _ @ : + - (systemd instances, Windows names). */
const SERVICE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.@:+-]{0,254}$/;

export function checkServiceName(name: string): string {
  if (!SERVICE_NAME.test(name) || name.includes('..')) throw new CommandError(`invalid service name ${JSON.stringify(name.slice(0, 100))}`);
  return name;
}

export async function serviceManager(): Promise<Manager> {
  if (process.platform === 'win32') return 'scm';
  if (process.platform !== 'linux') return 'rc.d';
  const init = await readFile('/proc/1/comm', 'utf8').catch(() => '');
  return init.trim() === 'systemd' ? 'systemd' : 'sysv';
}

export async function svcList(): Promise<{ manager: Manager; services: DeviceService[] }> {
  const manager = await serviceManager();
  return { manager, services: await MANAGERS[manager].list() };
}

/** One service as the services view shows it (the `service` check judges its state). */
export async function svcOne(name: string): Promise<{ manager: Manager; service: DeviceService }> {
  const manager = await serviceManager();
  return { manager, service: await MANAGERS[manager].one(checkServiceName(name)) };
}

export async function svcAction({ name, action }: CommandParams<'svc_action'>): Promise<{ service: DeviceService; output: string }> {
  const manager = MANAGERS[await serviceManager()];
  const output = await manager.act(checkServiceName(name), action);
  return { service: await manager.one(name), output: output.slice(-65_536) };
}
