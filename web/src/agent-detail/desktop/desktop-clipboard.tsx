// The clipboard both ways, where the VNC server shares it: what the device copied shows in a text box
// the technician copies from (the page cannot write the browser's clipboard unasked), and text typed or
// pasted here goes to the device's clipboard with "Send to device".
import type RFB from '@novnc/novnc';
import { useState } from 'react';

export function DesktopClipboard({ rfb, fromDevice, viewOnly }: { rfb: RFB | null; fromDevice: string; viewOnly: boolean }) {
  const [toDevice, setToDevice] = useState('');
  const [sent, setSent] = useState(false);
  return (
    <details className="desktop-clipboard">
      <summary>Clipboard</summary>
      <div className="desktop-clipboard-panes">
        <label>
          Copied on the device
          <textarea readOnly value={fromDevice} rows={3} placeholder="Text the device copies appears here." data-testid="device-clipboard" />
        </label>
        {!viewOnly && (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              rfb?.clipboardPasteFrom(toDevice);
              setSent(true);
            }}
          >
            <label>
              To the device's clipboard
              <textarea value={toDevice} rows={3} onChange={(e) => (setToDevice(e.target.value), setSent(false))} />
            </label>
            <div className="row">
              <button type="submit" disabled={!rfb || toDevice === ''}>
                Send to device
              </button>
              <span className="muted" role="status">
                {sent ? 'Sent: paste it on the device.' : ''}
              </span>
            </div>
          </form>
        )}
      </div>
    </details>
  );
}
