// The VNC server's password (and user name, for servers that ask one), asked when noVNC needs it. It
// goes into the RFB stream to the device and nowhere else: not stored, not sent to this server's API.
import { useState, type FormEvent } from 'react';

export function VncCredentials({ askUsername, onSubmit }: { askUsername: boolean; onSubmit: (password: string, username?: string) => void }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onSubmit(password, askUsername ? username : undefined);
    setPassword('');
  };
  return (
    <form className="card desktop-credentials" aria-label="VNC sign-in" onSubmit={submit}>
      <p>The device's VNC server asks for its password. It goes to the device only and is not stored.</p>
      <div className="row">
        {askUsername && (
          <label>
            VNC user name
            <input value={username} onChange={(e) => setUsername(e.target.value)} autoComplete="off" required />
          </label>
        )}
        <label>
          VNC password
          <input type="password" value={password} onChange={(e) => setPassword(e.target.value)} autoComplete="off" autoFocus />
        </label>
        <button type="submit" className="primary">
          Send
        </button>
      </div>
    </form>
  );
}
