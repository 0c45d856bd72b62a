// The device sessions' settings (issue 59) on the settings page: whether device shells are recorded
// and for how long recordings are kept, the shells' time limits and how many may be open at once,
// whether API keys may use files, processes and services, and the largest upload. Turning recording
// off is written to the audit log like every settings change.
import { SettingsGroupForm, type FlagSetting, type NumberSetting, type Settings } from './settings-group';

const FLAGS: readonly FlagSetting[] = [
  {
    key: 'device_recording',
    label: 'Record device shells',
    description: 'Every shell on a device is recorded for playback by admins (Recordings tab of the agent). Turning this off is written to the audit log.',
  },
  { key: 'device_api_keys', label: 'API keys may use files, processes and services', description: 'Write and admin keys only; no API key ever opens a device shell.' },
];

const NUMBERS: readonly NumberSetting[] = [
  { key: 'device_recording_retention_days', label: 'Keep recordings for (days)', min: 1, max: 3650 },
  { key: 'device_idle_minutes', label: 'Close an idle shell after (minutes)', min: 1, max: 1440 },
  { key: 'device_session_max_minutes', label: 'Close any shell after (minutes)', min: 1, max: 10_080 },
  { key: 'device_shells_per_agent', label: 'Shells open at once per agent', min: 1, max: 100 },
  { key: 'device_shells_per_user', label: 'Shells open at once per user', min: 1, max: 1000 },
  { key: 'device_upload_max_bytes', label: 'Largest upload to a device (MiB)', min: 1, unit: 1024 ** 2 },
];

export function DeviceSettingsForm({ initial }: { initial: Settings }) {
  return <SettingsGroupForm title="Device sessions" saveLabel="Save device settings" savedText="Device settings saved." initial={initial} flags={FLAGS} numbers={NUMBERS} />;
}
