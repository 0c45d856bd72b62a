// The customer's installer key: the agent key its installer packages carry in rmm-agent.json (and the key
// to give winget-autoupdate). Shown as a hint; the server makes it with the first download for the
// customer. A new key is shown once, with the ListPath ready to paste; the previous key keeps working
// for the devices that have it until it is deleted under API keys.
import { useState } from 'react';
import { Allowed } from '../auth/access';
import type { ApiBody } from '../api/api-types';
import { api } from '../api/client';
import { downloadWithToken } from '../firmware/transfer';
import { SecretOnce } from '../ui/secret-once';
import { useActionError } from '../ui/use-action-error';
import { ConfirmButton, ErrorBanner, Loading, RelativeTime } from '../ui/widgets';
import { useResource } from '../use-resource';
import { useServerBase, wauListPath } from './wau-lists';

export function InstallerKeyPanel({ customerId, onKeysChanged }: { customerId: number; onKeysChanged: () => void }) {
  const current = useResource((signal) => api<ApiBody<'/customers/{id}/installer-key'>>(`/customers/${customerId}/installer-key`, { signal }), [customerId]);
  const base = useServerBase();
  const [rotated, setRotated] = useState<ApiBody<'/customers/{id}/installer-key', 'post'>>();
  const [downloading, setDownloading] = useState(false);
  const { error, guard } = useActionError();
  const download = () =>
    guard(async () => {
      setDownloading(true);
      try {
        await downloadWithToken('/installer/download', { platform: 'windows', customer_id: customerId }, 'rmm-agent-installer-windows.zip');
      } finally {
        setDownloading(false);
      }
      // The first download for the customer makes its key.
      current.reload();
      onKeysChanged();
    });
  const rotate = () =>
    guard(async () => {
      setRotated(await api<ApiBody<'/customers/{id}/installer-key', 'post'>>(`/customers/${customerId}/installer-key`, { method: 'POST' }));
      current.reload();
      onKeysChanged();
    });

  const key = current.data;
  return (
    <section className="installer-key" aria-label="Installer key">
      <p>
        Windows installer packages downloaded for this customer carry its own agent key in <span className="mono">rmm-agent.json</span>, so the
        PCs they set up join this customer and read only its software-update lists.
      </p>
      <ErrorBanner error={current.error ?? error} />
      {!key ? (
        !current.error && <Loading />
      ) : (
        <p data-testid="installer-key-hint">
          Installer key:{' '}
          {key.key_hint ? (
            <>
              <span className="mono">{key.key_hint}</span> <span className="muted">(since <RelativeTime iso={key.created_at} />)</span>
            </>
          ) : (
            <span className="muted">none yet; the first download for this customer makes it.</span>
          )}
        </p>
      )}
      <div className="row">
        <button type="button" onClick={() => void download()} disabled={downloading}>
          {downloading ? 'Downloading…' : 'Download installer for this customer'}
        </button>
        <Allowed need="write">
          <ConfirmButton
            label="New installer key"
            question="Make a new installer key? Packages downloaded from now on carry it; PCs set up with the current key keep working until you delete that key under API keys."
            busyLabel="Making a new key…"
            onConfirm={rotate}
          />
        </Allowed>
      </div>
      {rotated && (
        <>
          <SecretOnce label="New installer key" secret={rotated.key} onDismiss={() => setRotated(undefined)} />
          <p className="muted">
            winget-autoupdate ListPath with this key: <code data-testid="wau-list-path-with-key">{wauListPath(base, customerId, rotated.key)}</code>
          </p>
        </>
      )}
    </section>
  );
}
