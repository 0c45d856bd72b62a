// The settings of device sessions (issue 59): recording of device shells and its retention, idle and
// total time limits, how many shells at once, whether API keys may use files, processes and services,
// and the largest upload; and of remote access (issue 60): the remote desktop's idle limit and read
// users' view-only desktops, the RDP and web-interface launchers' time limit and the devices' web ports.
// Stored as text in the settings table like the rest; absent means the default.
import { z } from 'zod';

export const DEVICE_SETTING_DEFAULTS = {
  device_recording: true,
  device_recording_retention_days: 90,
  device_idle_minutes: 15,
  device_session_max_minutes: 480,
  device_shells_per_agent: 4,
  device_shells_per_user: 10,
  device_api_keys: false,
  device_upload_max_bytes: 4 * 1024 ** 3,
  remote_desktop_idle_minutes: 15,
  remote_desktop_read_view_only: false,
  remote_launch_minutes: 60,
  web_interface_port_freebsd: 443,
  web_interface_port_linux: 8006,
} as const;

export type DeviceSettings = { -readonly [K in keyof typeof DEVICE_SETTING_DEFAULTS]: (typeof DEVICE_SETTING_DEFAULTS)[K] extends boolean ? boolean : number };
export const DEVICE_SETTING_KEYS = Object.keys(DEVICE_SETTING_DEFAULTS) as Array<keyof DeviceSettings>;

const count = (min: number, max: number) => z.number().int().min(min).max(max);

/** The fields as GET /settings shows them. */
export const deviceSettingsView = {
  device_recording: z.boolean().describe('Device shells are recorded (asciicast v2, kept in the blob store); default true. Turning it off is audited like every settings change'),
  device_recording_retention_days: z.number().int().describe('Recordings older than this many days are deleted (default 90)'),
  device_idle_minutes: z.number().int().describe('A device shell without input or output for this long is closed (default 15)'),
  device_session_max_minutes: z.number().int().describe('A device shell is closed after this long in all (default 480)'),
  device_shells_per_agent: z.number().int().describe('Device shells open at once on one agent (default 4)'),
  device_shells_per_user: z.number().int().describe('Device shells one user may have open at once (default 10)'),
  device_api_keys: z.boolean().describe('API keys (write or admin) may use files, processes and services on devices; default false. Keys never open a device shell'),
  device_upload_max_bytes: z.number().int().describe('Largest file uploaded to a device (default 4 GiB)'),
  remote_desktop_idle_minutes: z.number().int().describe('A remote desktop without keyboard or mouse input for this long is closed (default 15)'),
  remote_desktop_read_view_only: z.boolean().describe('Users with the read role may open remote desktops, view-only (their keyboard and mouse never reach the device); default false'),
  remote_launch_minutes: z.number().int().describe('RDP and web-interface tunnels close after this long, in use or not (default 60)'),
  web_interface_port_freebsd: z.number().int().describe("The port of a firewall's own web interface, on the device (default 443, OPNsense)"),
  web_interface_port_linux: z.number().int().describe("The port of a hypervisor's own web interface, on the device (default 8006, Proxmox VE)"),
};

/** The fields as PUT /settings takes them. */
export const deviceSettingsPatch = {
  device_recording: z.boolean().optional(),
  device_recording_retention_days: count(1, 3650).optional(),
  device_idle_minutes: count(1, 1440).optional(),
  device_session_max_minutes: count(1, 10_080).optional(),
  device_shells_per_agent: count(1, 100).optional(),
  device_shells_per_user: count(1, 1000).optional(),
  device_api_keys: z.boolean().optional(),
  device_upload_max_bytes: count(1, 2 ** 53 - 1).optional(),
  remote_desktop_idle_minutes: count(1, 1440).optional(),
  remote_desktop_read_view_only: z.boolean().optional(),
  remote_launch_minutes: count(1, 1440).optional(),
  web_interface_port_freebsd: count(1, 65_535).optional(),
  web_interface_port_linux: count(1, 65_535).optional(),
};

/** The device settings from the stored text values. */
export function deviceSettingsOf(stored: ReadonlyMap<string, string>): DeviceSettings {
  const out = { ...DEVICE_SETTING_DEFAULTS } as DeviceSettings;
  for (const key of DEVICE_SETTING_KEYS) {
    const text = stored.get(key);
    if (text === undefined) continue;
    const fallback = DEVICE_SETTING_DEFAULTS[key];
    const value = typeof fallback === 'boolean' ? text === 'true' : Number(text);
    if (typeof value === 'boolean' || Number.isFinite(value)) (out as Record<string, boolean | number>)[key] = value;
  }
  return out;
}
