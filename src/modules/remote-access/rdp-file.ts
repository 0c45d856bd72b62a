// The .rdp file the RDP launcher serves (issue 60): a Remote Desktop Connection file that points the
// technician's own client (mstsc, Remmina, Microsoft's Windows App) at the tunnel's proxy port. The
// client asks for the Windows credentials itself; nothing secret is in the file.

/** The file's text, CRLF-separated as mstsc writes them. */
export function rdpFile(host: string, port: number): string {
  // An IPv6 address needs brackets before the port.
  const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  return [
    `full address:s:${address}`,
    'prompt for credentials:i:1',
    'administrative session:i:0',
    'screen mode id:i:2',
    'use multimon:i:0',
    'redirectclipboard:i:1',
    'authentication level:i:2',
    '',
  ].join('\r\n');
}

/** A download name from the agent's name: letters, digits, dots, dashes and underscores only. */
export function rdpFileName(agentName: string): string {
  const safe = agentName.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._]+/, '').slice(0, 100);
  return `${safe || 'device'}.rdp`;
}
