// The install scripts the one-line install commands fetch (issue 33). Each carries where the agent
// reaches this server and the agent key it keeps (its customer's installer key, not the enrollment key
// the command presented), so an agent installed with a key that expires keeps working after it.
// Every value is quoted for its language; names come from people and may hold anything.

export interface ScriptValues {
  serverUrl: string;
  /** The agent key the installed agent signs in with. */
  agentKey: string;
  /** Adopts the pre-registered agent of this name; null: the device's hostname. */
  agentName: string | null;
  madeAt: Date;
}

/** A single-quoted POSIX shell word: every ' becomes '\'' . */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** A single-quoted PowerShell string: every ' (and its typographic look-alikes, which PowerShell also ends strings on) doubled. */
export function powershellQuote(value: string): string {
  return `'${value.replace(/['\u2018\u2019\u201a\u201b]/g, (q) => q + q)}'`;
}

/** The agent's settings as sh assignments; written as one quoted word, so no value can end it early. */
function envFile(v: ScriptValues): string {
  return `RMM_SERVER=${shellQuote(v.serverUrl)}\nRMM_AGENT_KEY=${shellQuote(v.agentKey)}\nRMM_AGENT_NAME=${shellQuote(v.agentName ?? '')}\n`;
}

/**
 * POSIX sh for Linux and FreeBSD: downloads the platform's agent binary (the latest firmware) into
 * RMM_INSTALL_DIR (default /opt/rmm-agent, FreeBSD /usr/local/rmm-agent), writes its settings readable
 * by root only, and starts it as a service (systemd, rc.d); RMM_NO_SERVICE=1, or neither available,
 * starts it in the background instead.
 */
export function shellInstaller(platform: 'linux' | 'freebsd', v: ScriptValues): string {
  const defaultDir = platform === 'freebsd' ? '/usr/local/rmm-agent' : '/opt/rmm-agent';
  return `#!/bin/sh
# RMM agent installer for ${platform}, made by ${v.serverUrl} at ${v.madeAt.toISOString()}.
# Installs the agent into \${RMM_INSTALL_DIR:-${defaultDir}} and starts it as a service (systemd on Linux,
# rc.d on FreeBSD). RMM_NO_SERVICE=1 starts it in the background instead (then it does not start after a reboot).
set -eu
SERVER_URL=${shellQuote(v.serverUrl)}
PLATFORM=${platform}
DIR="\${RMM_INSTALL_DIR:-${defaultDir}}"
SERVICE=yes
if [ -n "\${RMM_NO_SERVICE:-}" ]; then SERVICE=no; fi
if [ "$SERVICE" = yes ] && [ "$(id -u)" != 0 ]; then
  echo "error: run this as root (... | sudo sh), or set RMM_INSTALL_DIR and RMM_NO_SERVICE=1 to install for this user" >&2
  exit 1
fi
command -v curl >/dev/null 2>&1 || { echo "error: curl is needed (FreeBSD: pkg install curl)" >&2; exit 1; }
umask 077
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"

# Settings, readable by root (the installing user) only; the key never goes on a command line (ps shows those).
printf '%s' ${shellQuote(envFile(v))} > "$DIR/rmm-agent.env"
printf '%s\\n' ${shellQuote(`X-API-Key: ${v.agentKey}`)} > "$DIR/.download-header"

echo "Downloading the agent for $PLATFORM from $SERVER_URL ..."
if ! curl -fsS -H @"$DIR/.download-header" -o "$DIR/rmm-agent.download" "$SERVER_URL/api/v1/firmware/download?platform=$PLATFORM"; then
  rm -f "$DIR/.download-header" "$DIR/rmm-agent.download"
  echo "error: the agent could not be downloaded" >&2
  exit 1
fi
rm -f "$DIR/.download-header"
chmod 755 "$DIR/rmm-agent.download"
mv -f "$DIR/rmm-agent.download" "$DIR/rmm-agent"

cat > "$DIR/run-agent" <<'RMM_RUN'
#!/bin/sh
# Starts the agent with the settings the installer wrote beside it.
set -eu
HERE="$(cd "$(dirname "$0")" && pwd)"
set -a
. "$HERE/rmm-agent.env"
set +a
if [ -n "$RMM_AGENT_NAME" ]; then
  exec "$HERE/rmm-agent" --server "$RMM_SERVER" --name="$RMM_AGENT_NAME" --state "$HERE/agent-state.json" --binary "$HERE/rmm-agent"
fi
exec "$HERE/rmm-agent" --server "$RMM_SERVER" --state "$HERE/agent-state.json" --binary "$HERE/rmm-agent"
RMM_RUN
chmod 700 "$DIR/run-agent"

if [ "$SERVICE" = yes ] && [ "$(uname -s)" = FreeBSD ]; then
  cat > /usr/local/etc/rc.d/rmm_agent <<RMM_RC
#!/bin/sh
# PROVIDE: rmm_agent
# REQUIRE: LOGIN NETWORKING
# KEYWORD: shutdown
. /etc/rc.subr
name=rmm_agent
rcvar=rmm_agent_enable
pidfile=/var/run/rmm_agent.pid
command=/usr/sbin/daemon
command_args="-r -P \\\${pidfile} -o /var/log/rmm_agent.log /bin/sh $DIR/run-agent"
load_rc_config \\$name
: \\\${rmm_agent_enable:=NO}
run_rc_command "\\$1"
RMM_RC
  chmod 755 /usr/local/etc/rc.d/rmm_agent
  sysrc rmm_agent_enable=YES >/dev/null
  service rmm_agent restart
  echo "Installed in $DIR; service rmm_agent started (log: /var/log/rmm_agent.log)."
elif [ "$SERVICE" = yes ] && [ -d /run/systemd/system ]; then
  cat > /etc/systemd/system/rmm-agent.service <<RMM_UNIT
[Unit]
Description=RMM agent
After=network-online.target
Wants=network-online.target

[Service]
ExecStart=/bin/sh $DIR/run-agent
Restart=always
RestartSec=10

[Install]
WantedBy=multi-user.target
RMM_UNIT
  systemctl daemon-reload
  systemctl enable rmm-agent >/dev/null 2>&1
  systemctl restart rmm-agent
  echo "Installed in $DIR; service rmm-agent started (journalctl -u rmm-agent)."
else
  if [ "$SERVICE" = yes ]; then echo "warning: no systemd or rc.d here: the agent runs in the background and does not start after a reboot" >&2; fi
  nohup /bin/sh "$DIR/run-agent" >>"$DIR/rmm-agent.log" 2>&1 </dev/null &
  echo $! > "$DIR/rmm-agent.pid"
  echo "Installed in $DIR; the agent runs in the background (pid $(cat "$DIR/rmm-agent.pid"), log $DIR/rmm-agent.log)."
fi
`;
}

/**
 * Windows PowerShell (5.1 and later): downloads the customer's installer package (with rmm-agent.json
 * in it) into RMM_INSTALL_DIR (default "Program Files\RMM Agent") and hands over to the package's own
 * installer: its install.ps1 (given -AgentName and -ConfigFile) or else its MSI (RMM_AGENT_NAME, RMM_CONFIG).
 */
export function powershellInstaller(v: ScriptValues): string {
  return `# RMM agent installer for Windows, made by ${v.serverUrl} at ${v.madeAt.toISOString()}. Run it in an elevated PowerShell.
$ErrorActionPreference = 'Stop'
$ProgressPreference = 'SilentlyContinue'
[Net.ServicePointManager]::SecurityProtocol = [Net.ServicePointManager]::SecurityProtocol -bor [Net.SecurityProtocolType]::Tls12
$server = ${powershellQuote(v.serverUrl)}
$key = ${powershellQuote(v.agentKey)}
$name = ${powershellQuote(v.agentName ?? '')}
$dir = if ($env:RMM_INSTALL_DIR) { $env:RMM_INSTALL_DIR } else { Join-Path $env:ProgramFiles 'RMM Agent' }
$zip = Join-Path ([IO.Path]::GetTempPath()) ('rmm-agent-' + [guid]::NewGuid() + '.zip')
Write-Host "Downloading the installer package from $server ..."
Invoke-WebRequest -UseBasicParsing -Headers @{ 'X-API-Key' = $key } -Uri "$server/api/v1/installer/download?platform=windows" -OutFile $zip
New-Item -ItemType Directory -Force -Path $dir | Out-Null
Expand-Archive -Force -Path $zip -DestinationPath $dir
Remove-Item -Force $zip
$config = Join-Path $dir 'rmm-agent.json'
$setup = Join-Path $dir 'install.ps1'
$msi = Get-ChildItem -Path $dir -Filter '*.msi' | Select-Object -First 1
if (Test-Path $setup) {
  & $setup -AgentName $name -ConfigFile $config
} elseif ($msi) {
  $arguments = @('/i', ('"' + $msi.FullName + '"'), '/qn', ('RMM_AGENT_NAME="' + $name + '"'), ('RMM_CONFIG="' + $config + '"'))
  $run = Start-Process msiexec.exe -Wait -PassThru -ArgumentList $arguments
  if ($run.ExitCode -ne 0) { throw "msiexec failed with exit code $($run.ExitCode)" }
} else {
  throw 'The installer package has neither install.ps1 nor an .msi'
}
Write-Host "Installed in $dir."
`;
}
