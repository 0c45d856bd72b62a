// "Install the agent": makes a new agent key (an enrollment key by default: it expires after N days and,
// if asked, after N installs) and shows the one-line install command per platform, for a pre-registered
// agent (the installed agent adopts it) or a customer (devices register under their hostnames). The
// commands hold the key: they are shown once, like a new key.
import { useState } from 'react';
import type { ApiBody, ApiRequest } from '../api/api-types';
import { api, ApiError } from '../api/client';
import { useAccess } from '../auth/access';
import { Link } from '../router';
import { ErrorBanner } from '../ui/widgets';
import { useSubmit } from '../ui/use-submit';
import { CopyButton } from './copy-button';
import './install.css';

type InstallCommands = ApiBody<'/install-commands', 'post'>;

const HOW: Record<InstallCommands['commands'][number]['platform'], { label: string; where: string }> = {
  linux: { label: 'Linux', where: 'as root in a shell (e.g. sudo -i first); installs a systemd service' },
  freebsd: { label: 'FreeBSD / firewall', where: 'as root in the shell (option 8 on the console menu); installs an rc.d service' },
  windows: { label: 'Windows', where: 'in an elevated PowerShell; runs the installer package' },
};

export function InstallPanel({
  agentId,
  customerId,
  title = 'Install the agent',
  onMade,
}: {
  agentId?: string;
  customerId?: number | null;
  title?: string;
  /** A key was made (lists of keys may want to reload). */
  onMade?: () => void;
}) {
  const [enrollment, setEnrollment] = useState(true);
  const [days, setDays] = useState('7');
  const [uses, setUses] = useState('');
  const [made, setMade] = useState<InstallCommands>();
  const { busy, error, submit } = useSubmit(async () => {
    setMade(undefined);
    const target = agentId !== undefined ? { agent_id: agentId } : { customer_id: customerId ?? null };
    const limits = enrollment ? { expires_in_days: days ? Number(days) : null, max_uses: uses ? Number(uses) : null } : {};
    setMade(await api<InstallCommands>('/install-commands', { method: 'POST', body: { ...target, ...limits } satisfies ApiRequest<'/install-commands', 'post'> }));
    onMade?.();
  });

  return (
    <section className="card install-panel" aria-label={title} data-testid="install-panel">
      <h2>{title}</h2>
      <form className="row" onSubmit={(e) => void submit(e)}>
        <label className="check">
          <input type="checkbox" checked={enrollment} onChange={(e) => setEnrollment(e.target.checked)} name="enrollment" />
          Enrollment key
        </label>
        {enrollment && (
          <>
            <label>
              Expires after (days)
              <input name="expires-days" type="number" min={1} max={365} value={days} onChange={(e) => setDays(e.target.value)} />
            </label>
            <label>
              Installs allowed
              <input name="max-uses" type="number" min={1} max={10000} value={uses} placeholder="unlimited" onChange={(e) => setUses(e.target.value)} />
            </label>
          </>
        )}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Making…' : 'Show install commands'}
        </button>
      </form>
      <p className="muted">
        {enrollment
          ? 'The commands carry a new key that stops working after its days or installs; the agents it installs keep their customer’s installer key.'
          : 'The commands carry a new agent key that never expires; delete it under API keys to stop it.'}
      </p>
      {error instanceof ApiError && error.code === 'BACKEND_URL_UNSET' ? <NeedsServerAddress /> : <ErrorBanner error={error} />}
      {made && (
        <div className="install-commands" data-testid="install-commands">
          <p className="muted">
            For {made.agent_name ? <strong>{made.agent_name}</strong> : 'a new device'} via <span className="mono">{made.server_url}</span>, key{' '}
            <span className="mono">{made.key.key_hint}</span>
            {made.key.expires_at ? `, valid until ${new Date(made.key.expires_at).toLocaleString()}` : ''}
            {made.key.max_uses ? `, ${made.key.max_uses} install(s)` : ''}. Copy them now: they are not shown again.
          </p>
          {made.commands.map((c) => (
            <div key={c.platform} className="install-command" data-testid={`install-command-${c.platform}`}>
              <h3>{HOW[c.platform].label}</h3>
              <p className="muted">Run {HOW[c.platform].where}.</p>
              {c.problem && (
                <p className="banner banner-warn" role="status">
                  {c.problem}
                </p>
              )}
              <div className="row">
                <code className="command" data-testid="command-text">
                  {c.command}
                </code>
                <CopyButton text={c.command} />
              </div>
            </div>
          ))}
        </div>
      )}
    </section>
  );
}

/** A fresh server does not know the address devices reach it at: say where to set it, in the console's words. */
function NeedsServerAddress() {
  // The Settings page is for administrators of every customer (its route's need is full-admin).
  const mayChangeSettings = useAccess().fullAdmin;
  return (
    <div className="banner banner-warn" role="alert">
      Install commands need this server&apos;s address as devices reach it (for example https://rmm.example.com).{' '}
      {mayChangeSettings ? (
        <>
          Set it under <Link to="/settings">Settings → Backend URL</Link> first.
        </>
      ) : (
        'Ask an administrator to set it under Settings → Backend URL.'
      )}
    </div>
  );
}
