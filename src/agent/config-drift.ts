// A simulated firewall's configuration changes now and then (issue 33: the demo's backups never
// changed, so there was nothing to compare): a rule added, the oldest of those dropped, the timezone
// moved. The changes live in the device state and are rendered into the configuration file the backup
// command returns; a device that never changed (a real --backup-file, the tests' agents) returns the
// file as it is.
import { randomUUID } from 'node:crypto';
import type { ConfigChanges, DeviceState, DeviceView } from './device-state.js';

const TIMEZONES = ['Europe/Berlin', 'Europe/Vienna', 'Europe/Zurich', 'Etc/UTC'];
const SHIPPED: ConfigChanges = { revision: 0, timezone: 'Europe/Berlin', rules: [] };
/** Rules kept: the oldest added rule goes once there are more. */
const MAX_ADDED_RULES = 4;

/** One change: every third a new timezone, otherwise a filter rule added. */
export function driftConfig(device: DeviceState): void {
  const config = (device.config_changes ??= structuredClone(SHIPPED));
  config.revision += 1;
  if (config.revision % 3 === 0) {
    config.timezone = TIMEZONES[(TIMEZONES.indexOf(config.timezone) + 1) % TIMEZONES.length]!;
    return;
  }
  const host = 10 + (config.revision % 200);
  config.rules.push({ uuid: randomUUID().replaceAll('-', ''), descr: `Allow monitoring from 192.0.2.${host}`, source: `192.0.2.${host}/32` });
  if (config.rules.length > MAX_ADDED_RULES) config.rules.shift();
}

/** The configuration file with the device's changes applied. */
export function renderConfig(base: string, changes: DeviceView['config_changes']): string {
  if (!changes) return base;
  const rules = changes.rules
    .map(
      (r) =>
        `    <rule uuid="${r.uuid}">\n      <type>pass</type>\n      <interface>lan</interface>\n      <ipprotocol>inet</ipprotocol>\n` +
        `      <protocol>tcp</protocol>\n      <source><address>${r.source}</address></source>\n      <destination><any>1</any><port>161</port></destination>\n` +
        `      <descr>${r.descr}</descr>\n    </rule>\n`,
    )
    .join('');
  return base.replace(/<timezone>[^<]*<\/timezone>/, `<timezone>${changes.timezone}</timezone>`).replace(/(\n\s*)<\/filter>/, `\n${rules.trimEnd()}$1</filter>`);
}
