// Copy and paste for a mouse user: the selection to the clipboard, the clipboard into the shell (as a
// paste, so a shell that asked for bracketed paste sees one). The keys do the same: Ctrl+Shift+C and
// Ctrl+Shift+V. Browsers give the clipboard to secure pages only (HTTPS or localhost): elsewhere the
// buttons are left out and the keys of the browser's own menu still work.
import type { Terminal } from '@xterm/xterm';
import { useState } from 'react';

export function ClipboardButtons({ terminal }: { terminal: Terminal | null }) {
  const [note, setNote] = useState('');
  // `navigator.clipboard` is undefined outside a secure context, whatever the DOM types say.
  const clipboard = (navigator as { clipboard?: Clipboard }).clipboard;
  if (!clipboard) return null;
  const copy = async () => {
    const text = terminal?.getSelection() ?? '';
    if (!text) return setNote('Select text in the shell first.');
    await clipboard.writeText(text);
    setNote('Copied.');
    terminal?.focus();
  };
  const paste = async () => {
    const text = await clipboard.readText();
    if (text) terminal?.paste(text);
    setNote('');
    terminal?.focus();
  };
  const failed = () => setNote('The browser refused the clipboard.');
  return (
    <span className="clipboard-buttons">
      <button type="button" disabled={!terminal} title="Ctrl+Shift+C" onMouseDown={(e) => e.preventDefault()} onClick={() => void copy().catch(failed)}>
        Copy
      </button>
      <button type="button" disabled={!terminal} title="Ctrl+Shift+V" onMouseDown={(e) => e.preventDefault()} onClick={() => void paste().catch(failed)}>
        Paste
      </button>
      {note && <span className="muted">{note}</span>}
    </span>
  );
}
