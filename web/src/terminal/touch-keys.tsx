// Keys a phone's keyboard does not have, for the terminal on small screens: Esc, Tab, Ctrl-C, Ctrl-D
// and the arrows. Each sends what a real keyboard would; the arrows follow the application cursor
// mode programs such as vi and less switch on. A key's spoken name starts with the words it shows ("Ctrl-C
// (Control-C)"), so a user of voice control can say what they see.
import type { Terminal } from '@xterm/xterm';

const KEYS: ReadonlyArray<{ label: string; name: string; send: (applicationCursor: boolean) => string }> = [
  { label: 'Esc', name: 'Esc (Escape)', send: () => '\x1b' },
  { label: 'Tab', name: 'Tab', send: () => '\t' },
  { label: 'Ctrl-C', name: 'Ctrl-C (Control-C)', send: () => '\x03' },
  { label: 'Ctrl-D', name: 'Ctrl-D (Control-D)', send: () => '\x04' },
  { label: '↑', name: 'Up', send: (app) => (app ? '\x1bOA' : '\x1b[A') },
  { label: '↓', name: 'Down', send: (app) => (app ? '\x1bOB' : '\x1b[B') },
  { label: '←', name: 'Left', send: (app) => (app ? '\x1bOD' : '\x1b[D') },
  { label: '→', name: 'Right', send: (app) => (app ? '\x1bOC' : '\x1b[C') },
];

export function TouchKeys({ terminal, onKey }: { terminal: Terminal | null; onKey: (sequence: string) => void }) {
  return (
    <div className="terminal-keys" role="toolbar" aria-label="Terminal keys">
      {KEYS.map((key) => (
        <button
          key={key.name}
          type="button"
          aria-label={key.name}
          disabled={!terminal}
          // Keeps the focus (and the phone's keyboard) in the terminal.
          onMouseDown={(e) => e.preventDefault()}
          onClick={() => {
            if (!terminal) return;
            onKey(key.send(terminal.modes.applicationCursorKeysMode));
            terminal.focus();
          }}
        >
          {key.label}
        </button>
      ))}
    </div>
  );
}
