// The CLI command that turns a tunnel into a local port on the technician's machine, with a copy
// button, and optionally a second one that copies it with the technician's own credential filled in
// (never shown on the page). The Clipboard API exists only in secure contexts (HTTPS or localhost);
// elsewhere the shown command is selected so Ctrl+C copies it, and the filled-in one cannot be copied.
import { useEffect, useRef, useState } from 'react';

export function ConnectCommand({ command, filled }: { command: string; filled?: { label: string; command: string } }) {
  const codeRef = useRef<HTMLElement>(null);
  const [status, setStatus] = useState<'' | 'copied' | 'selected' | 'no-clipboard'>('');

  useEffect(() => {
    if (!status) return;
    const timer = setTimeout(() => setStatus(''), 4000);
    return () => clearTimeout(timer);
  }, [status]);

  const select = () => {
    const node = codeRef.current;
    const selection = window.getSelection();
    if (!node || !selection) return;
    selection.selectAllChildren(node);
    setStatus('selected');
  };

  const copy = async (text: string, orElse: () => void) => {
    try {
      if (!navigator.clipboard) throw new Error('no clipboard');
      await navigator.clipboard.writeText(text);
      setStatus('copied');
    } catch {
      orElse();
    }
  };

  return (
    <div className="connect-command">
      <code ref={codeRef} className="connect-command-text">
        {command}
      </code>
      <div className="row connect-command-actions">
        <button type="button" onClick={() => void copy(command, select)}>
          Copy command
        </button>
        {filled && (
          <button type="button" onClick={() => void copy(filled.command, () => setStatus('no-clipboard'))}>
            {filled.label}
          </button>
        )}
        <span className="muted" role="status">
          {status === 'copied'
            ? 'Copied.'
            : status === 'selected'
              ? 'Selected: press Ctrl+C (⌘C on a Mac) to copy.'
              : status === 'no-clipboard'
                ? 'This browser copies only over HTTPS or on localhost.'
                : ''}
        </span>
      </div>
    </div>
  );
}
