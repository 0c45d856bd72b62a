// The remote-access settings (issue 60) on the settings page: when an idle remote desktop closes,
// whether read users may watch desktops, how long RDP and web-interface tunnels stay open, and the
// web-interface port each platform's devices have unless an agent says otherwise.
import { SettingsGroupForm, type FlagSetting, type NumberSetting, type Settings } from './settings-group';

const FLAGS: readonly FlagSetting[] = [
  {
    key: 'remote_desktop_read_view_only',
    label: 'Read users may watch remote desktops',
    description: 'View only: the server forwards no keyboard or mouse input from them. Off: only write and admin users open desktops.',
  },
];

const NUMBERS: readonly NumberSetting[] = [
  { key: 'remote_desktop_idle_minutes', label: 'Close a remote desktop without input after (minutes)', min: 1, max: 1440 },
  { key: 'remote_launch_minutes', label: 'Close RDP and web-interface tunnels after (minutes)', min: 1, max: 1440, description: 'Their time limit, whether used or not.' },
  { key: 'web_interface_port_freebsd', label: 'Web interface port of FreeBSD devices', min: 1, max: 65_535, description: 'OPNsense and pfSense answer on 443.' },
  { key: 'web_interface_port_linux', label: 'Web interface port of Linux devices', min: 1, max: 65_535, description: 'Proxmox VE answers on 8006.' },
];

export function RemoteAccessSettingsForm({ initial }: { initial: Settings }) {
  return <SettingsGroupForm title="Remote access" saveLabel="Save remote-access settings" savedText="Remote-access settings saved." initial={initial} flags={FLAGS} numbers={NUMBERS} />;
}
