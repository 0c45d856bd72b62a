// What the fleet's simulated devices run, per platform: the services of a firewall (FreeBSD, rc.d), a
// hypervisor host (Proxmox VE on Linux, systemd) and a Windows machine (its service control manager),
// the processes each running service has, and the processes that belong to no service. Read-only
// data shared by every simulated agent; each agent keeps only its own changes (simulated-device.ts).
import type { Platform } from '../agent/device-state.js';

export interface CatalogProcess {
  name: string;
  command: string;
  user: string | null;
  /** Resident memory in MiB and the usual CPU % around which a listing wanders. */
  rssMiB: number;
  cpu: number;
}

export interface CatalogService {
  name: string;
  description: string;
  running: boolean;
  startMode: 'auto' | 'manual' | 'disabled';
  processes: CatalogProcess[];
}

export interface Catalog {
  manager: 'systemd' | 'rc.d' | 'scm';
  /** PID 1 (or Windows' System), never killable. */
  init: CatalogProcess;
  /** The agent itself: never killable either. */
  agent: CatalogProcess;
  others: CatalogProcess[];
  services: CatalogService[];
}

const p = (name: string, command: string, user: string | null, rssMiB: number, cpu = 0.1): CatalogProcess => ({ name, command, user, rssMiB, cpu });
const svc = (name: string, description: string, running: boolean, startMode: CatalogService['startMode'], ...processes: CatalogProcess[]): CatalogService => ({ name, description, running, startMode, processes });

const firewall: Catalog = {
  manager: 'rc.d',
  init: p('init', '/sbin/init', 'root', 1),
  agent: p('rmm-agent', '/usr/local/sbin/rmm-agent --config /usr/local/etc/rmm-agent.conf', 'root', 38, 0.3),
  others: [p('devd', '/sbin/devd -q', 'root', 2), p('filterlog', '/usr/local/sbin/filterlog -i pflog0 -p /var/run/filterlog.pid', 'root', 3, 0.4), p('dpinger', '/usr/local/bin/dpinger -f -S -r 0 -i WAN_GW 203.0.113.1', 'root', 2, 0.2)],
  services: [
    svc('sshd', 'Secure Shell daemon', true, 'auto', p('sshd', '/usr/sbin/sshd', 'root', 9)),
    svc('syslogd', 'System log daemon', true, 'auto', p('syslogd', '/usr/sbin/syslogd -s -c -c -l /var/dhcpd/var/run/log', 'root', 3)),
    svc('cron', 'Daemon to execute scheduled commands', true, 'auto', p('cron', '/usr/sbin/cron -s', 'root', 2)),
    svc('unbound', 'Unbound DNS resolver', true, 'auto', p('unbound', '/usr/local/sbin/unbound -c /var/unbound/unbound.conf', 'unbound', 64, 0.8)),
    svc('ntpd', 'Network Time Protocol daemon', true, 'auto', p('ntpd', '/usr/local/sbin/ntpd -g -c /var/etc/ntpd.conf', 'root', 5)),
    svc('dhcpd', 'ISC DHCPv4 server', true, 'auto', p('dhcpd', '/usr/local/sbin/dhcpd -user dhcpd -group dhcpd -chroot /var/dhcpd -cf /etc/dhcpd.conf igb1', 'dhcpd', 11)),
    svc('configd', 'Configuration daemon', true, 'auto', p('python3.11', '/usr/local/bin/python3 /usr/local/opnsense/service/configd.py', 'root', 48, 0.2)),
    svc('wireguard', 'WireGuard VPN', true, 'auto', p('wg-quick', '/usr/local/bin/wg-quick up wg0', 'root', 2)),
    svc('openvpn', 'OpenVPN server', false, 'manual', p('openvpn', '/usr/local/sbin/openvpn --config /var/etc/openvpn/server1.conf', 'root', 9)),
    svc('snmpd', 'Net-SNMP agent', false, 'disabled', p('snmpd', '/usr/local/sbin/snmpd -p /var/run/snmpd.pid', 'root', 12)),
  ],
};

const hypervisor: Catalog = {
  manager: 'systemd',
  init: p('systemd', '/sbin/init', 'root', 12),
  agent: p('rmm-agent', '/usr/local/bin/rmm-agent --config /etc/rmm-agent/agent.conf', 'root', 44, 0.3),
  others: [p('kthreadd', '[kthreadd]', 'root', 0), p('qemu-system-x86', '/usr/bin/kvm -id 101 -name web-01 -smp 4 -m 8192', 'root', 8300, 6), p('qemu-system-x86', '/usr/bin/kvm -id 102 -name db-01 -smp 8 -m 16384', 'root', 16500, 11)],
  services: [
    svc('pve-cluster', 'The Proxmox VE cluster filesystem', true, 'auto', p('pmxcfs', '/usr/bin/pmxcfs', 'root', 55, 0.4)),
    svc('pvedaemon', 'PVE API Daemon', true, 'auto', p('pvedaemon', 'pvedaemon', 'root', 140), p('pvedaemon worke', 'pvedaemon worker', 'root', 150)),
    svc('pveproxy', 'PVE API Proxy Server', true, 'auto', p('pveproxy', 'pveproxy', 'www-data', 160), p('pveproxy worker', 'pveproxy worker', 'www-data', 170, 0.5)),
    svc('pvestatd', 'PVE Status Daemon', true, 'auto', p('pvestatd', 'pvestatd', 'root', 130, 1.2)),
    svc('corosync', 'Corosync Cluster Engine', true, 'auto', p('corosync', '/usr/sbin/corosync -f', 'root', 180, 0.6)),
    svc('ssh', 'OpenBSD Secure Shell server', true, 'auto', p('sshd', 'sshd: /usr/sbin/sshd -D [listener] 0 of 10-100 startups', 'root', 8)),
    svc('cron', 'Regular background program processing daemon', true, 'auto', p('cron', '/usr/sbin/cron -f', 'root', 3)),
    svc('chrony', 'chrony, an NTP client/server', true, 'auto', p('chronyd', '/usr/sbin/chronyd -F 1', '_chrony', 4)),
    svc('rsyslog', 'System Logging Service', true, 'auto', p('rsyslogd', '/usr/sbin/rsyslogd -n -iNONE', 'root', 6)),
    svc('postfix', 'Postfix Mail Transport Agent', true, 'auto', p('master', '/usr/lib/postfix/sbin/master -w', 'root', 5)),
    svc('nfs-server', 'NFS server and services', false, 'disabled'),
    svc('zfs-scrub', 'ZFS pool scrub', false, 'manual'),
  ],
};

const windows: Catalog = {
  manager: 'scm',
  init: p('System', 'System', 'NT AUTHORITY\\SYSTEM', 0, 0.4),
  agent: p('rmm-agent.exe', '"C:\\Program Files\\RMM Agent\\rmm-agent.exe" --service', 'NT AUTHORITY\\SYSTEM', 42, 0.3),
  others: [
    p('smss.exe', '\\SystemRoot\\System32\\smss.exe', 'NT AUTHORITY\\SYSTEM', 1),
    p('csrss.exe', '%SystemRoot%\\system32\\csrss.exe ObjectDirectory=\\Windows', 'NT AUTHORITY\\SYSTEM', 5),
    p('wininit.exe', 'wininit.exe', 'NT AUTHORITY\\SYSTEM', 6),
    p('services.exe', 'C:\\Windows\\system32\\services.exe', 'NT AUTHORITY\\SYSTEM', 10),
    p('lsass.exe', 'C:\\Windows\\system32\\lsass.exe', 'NT AUTHORITY\\SYSTEM', 18),
    p('explorer.exe', 'C:\\Windows\\Explorer.EXE', 'WS\\jdoe', 120, 0.6),
    p('OUTLOOK.EXE', '"C:\\Program Files\\Microsoft Office\\root\\Office16\\OUTLOOK.EXE"', 'WS\\jdoe', 310, 1.5),
  ],
  services: [
    svc('EventLog', 'Windows Event Log', true, 'auto', p('svchost.exe', 'C:\\Windows\\System32\\svchost.exe -k LocalServiceNetworkRestricted -p -s EventLog', 'NT AUTHORITY\\LOCAL SERVICE', 20)),
    svc('Dnscache', 'DNS Client', true, 'auto', p('svchost.exe', 'C:\\Windows\\system32\\svchost.exe -k NetworkService -p -s Dnscache', 'NT AUTHORITY\\NETWORK SERVICE', 12)),
    svc('Spooler', 'Print Spooler', true, 'auto', p('spoolsv.exe', 'C:\\Windows\\System32\\spoolsv.exe', 'NT AUTHORITY\\SYSTEM', 14)),
    svc('WinDefend', 'Microsoft Defender Antivirus Service', true, 'auto', p('MsMpEng.exe', '"C:\\ProgramData\\Microsoft\\Windows Defender\\platform\\4.18.24090.11-0\\MsMpEng.exe"', 'NT AUTHORITY\\SYSTEM', 220, 2)),
    svc('W32Time', 'Windows Time', true, 'manual', p('svchost.exe', 'C:\\Windows\\system32\\svchost.exe -k LocalService -s W32Time', 'NT AUTHORITY\\LOCAL SERVICE', 8)),
    svc('LanmanServer', 'Server', true, 'auto', p('svchost.exe', 'C:\\Windows\\system32\\svchost.exe -k netsvcs -p -s LanmanServer', 'NT AUTHORITY\\SYSTEM', 9)),
    svc('TermService', 'Remote Desktop Services', false, 'manual', p('svchost.exe', 'C:\\Windows\\System32\\svchost.exe -k NetworkService -s TermService', 'NT AUTHORITY\\NETWORK SERVICE', 16)),
    svc('wuauserv', 'Windows Update', false, 'manual', p('svchost.exe', 'C:\\Windows\\system32\\svchost.exe -k netsvcs -p -s wuauserv', 'NT AUTHORITY\\SYSTEM', 30, 3)),
    svc('BITS', 'Background Intelligent Transfer Service', false, 'manual', p('svchost.exe', 'C:\\Windows\\System32\\svchost.exe -k netsvcs -p -s BITS', 'NT AUTHORITY\\SYSTEM', 11)),
    svc('RemoteRegistry', 'Remote Registry', false, 'disabled', p('svchost.exe', 'C:\\Windows\\system32\\svchost.exe -k localService -p -s RemoteRegistry', 'NT AUTHORITY\\LOCAL SERVICE', 6)),
  ],
};

export const CATALOGS: Record<Platform, Catalog> = { freebsd: firewall, linux: hypervisor, windows };
