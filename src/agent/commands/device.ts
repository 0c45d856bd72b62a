// Device commands acting on the simulated device state: update_check, update, major_update, reboot and
// hypervisor_action. Reboots are only requested here; the agent carries them out after answering.
import type { CommandParams } from '../../modules/agent-hub/agent-protocol.js';
import type { DeviceState, DeviceView, Guest } from '../device-state.js';
import { CommandError, type CommandContext } from './types.js';

const updateView = (device: DeviceView) =>
  device.pending_updates.map((u) => ({ name: u.name, current: u.current, new: u.new, security: u.security }));

export async function updateCheck(_params: CommandParams<'update_check'>, ctx: CommandContext) {
  const device = ctx.device.device;
  return {
    product: device.product,
    current_version: device.version,
    updates: updateView(device),
    reboot_required: device.reboot_required,
  };
}

export async function applyUpdates(params: CommandParams<'update'>, ctx: CommandContext) {
  const result = await ctx.device.update((device) => {
    const previous = device.version;
    const apply = device.pending_updates.filter((u) => !params.security_only || u.security);
    device.pending_updates = device.pending_updates.filter((u) => !apply.includes(u));
    for (const u of apply) if (u.core) device.version = u.new;
    if (apply.length > 0) device.reboot_required = true;
    return {
      previous_version: previous,
      current_version: device.version,
      applied: apply.map((u) => ({ name: u.name, from: u.current, to: u.new, security: u.security })),
      remaining: updateView(device),
      reboot_required: device.reboot_required,
    };
  });
  if (params.reboot) ctx.scheduleReboot(0);
  return { ...result, rebooting: params.reboot };
}

export async function majorUpdate(params: CommandParams<'major_update'>, ctx: CommandContext) {
  const result = await ctx.device.update((device) => {
    const previous = device.version;
    const changed = previous !== params.version;
    if (changed) {
      device.version = params.version;
      // Pending updates belonged to the old release.
      device.pending_updates = [];
      device.reboot_required = true;
    }
    return { previous_version: previous, current_version: device.version, changed, reboot_required: device.reboot_required };
  });
  if (params.reboot) ctx.scheduleReboot(0);
  return { ...result, rebooting: params.reboot };
}

export async function reboot(params: CommandParams<'reboot'>, ctx: CommandContext) {
  ctx.scheduleReboot(params.delay);
  return { rebooting: true, delay: params.delay };
}

/** Called by the agent when a simulated reboot happens. */
export function recordReboot(device: DeviceState, at: Date): void {
  device.reboot_required = false;
  device.reboot_count += 1;
  device.last_reboot_at = at.toISOString();
}

const guestStatusAfter = { start: 'running', stop: 'stopped', shutdown: 'stopped' } as const;

export async function hypervisorAction(params: CommandParams<'hypervisor_action'>, ctx: CommandContext) {
  if (params.action === 'shutdown' && params.type === 'container') {
    throw new CommandError('shutdown is not supported for containers; use stop');
  }
  return ctx.device.update((device) => {
    const guest = findGuest(device.guests, params);
    const previous = guest.status;
    guest.status = guestStatusAfter[params.action];
    return {
      vmid: guest.vmid,
      name: guest.name,
      type: guest.type,
      node: guest.node,
      action: params.action,
      previous_status: previous,
      status: guest.status,
      changed: previous !== guest.status,
    };
  });
}

function findGuest(guests: Guest[], params: CommandParams<'hypervisor_action'>): Guest {
  const guest = guests.find((g) => g.vmid === params.vmid);
  if (!guest) throw new CommandError(`no guest with vmid ${params.vmid}`);
  if (guest.type !== params.type) throw new CommandError(`guest ${params.vmid} is a ${guest.type}, not a ${params.type}`);
  if (params.node !== undefined && params.node !== guest.node) throw new CommandError(`guest ${params.vmid} is not on node ${params.node}`);
  return guest;
}
