// A secret the server shows once (a new API key): in a monospace box with a copy button and the warning
// that it will not be shown again. It lives only in the page's memory until dismissed.
import { useState } from 'react';

export function SecretOnce({ label, secret, onDismiss }: { label: string; secret: string; onDismiss: () => void }) {
  const [copied, setCopied] = useState<'yes' | 'failed'>();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied('yes');
    } catch {
      // Clipboard access needs a secure context (https or localhost); the text can still be selected.
      setCopied('failed');
    }
  };
  return (
    <div className="banner banner-warn secret-once" role="status" data-testid="secret-once">
      <p>
        <strong>{label}</strong>: copy it now, it will not be shown again.
      </p>
      <div className="row">
        <code className="secret-value" data-testid="secret-value">
          {secret}
        </code>
        <button type="button" onClick={() => void copy()}>
          {copied === 'yes' ? 'Copied' : 'Copy'}
        </button>
        <button type="button" className="link" onClick={onDismiss}>
          Done
        </button>
      </div>
      {copied === 'failed' && <p className="muted">The browser refused the clipboard here; select the text and copy it.</p>}
    </div>
  );
}
