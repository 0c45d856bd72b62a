// The CLI command that turns a tunnel into a local port on the technician's machine, with a copy
// button. The Clipboard API exists only in secure contexts (HTTPS or localhost); elsewhere the
// command is selected so Ctrl+C copies it.
import { useEffect, useRef, useState } from 'react';

export function ConnectCommand({ command }: { command: string }) {
  const codeRef = useRef<HTMLElement>(null);
  const [status, setStatus] = useState<'' | 'copied' | 'selected'>('');

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

  const copy = async () => {
    try {
      if (!navigator.clipboard) throw new Error('no clipboard');
      await navigator.clipboard.writeText(command);
      setStatus('copied');
    } catch {
      select();
    }
  };

  return (
    <div className="connect-command">
      <code ref={codeRef} className="connect-command-text">
        {command}
      </code>
      <div className="row connect-command-actions">
        <button type="button" onClick={() => void copy()}>
          Copy command
        </button>
        <span className="muted" role="status">
          {status === 'copied' ? 'Copied.' : status === 'selected' ? 'Selected: press Ctrl+C (⌘C on a Mac) to copy.' : ''}
        </span>
      </div>
    </div>
  );
}
