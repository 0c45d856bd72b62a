// The device shell's choices on the agent: which shell runs when the server names none, and what the
// shell's environment holds (never the agent's own settings, among them its key).
import { describe, expect, it } from 'vitest';
import { defaultShell, shellEnv } from './pty-shell.js';

describe('the device shell on the agent', () => {
  it('runs $SHELL, else /bin/sh, and PowerShell on Windows', () => {
    expect(defaultShell('linux', { SHELL: '/bin/zsh' })).toBe('/bin/zsh');
    expect(defaultShell('freebsd', {})).toBe('/bin/sh');
    expect(defaultShell('win32', { SHELL: '/bin/bash' })).toBe('powershell.exe');
  });

  it("gives the shell TERM=xterm-256color and the server's variables, without the agent's RMM_ settings", () => {
    const env = shellEnv({ LANG: 'de_DE.UTF-8' }, { PATH: '/usr/bin', RMM_AGENT_KEY: 'secret-key', TERM: 'dumb', LANG: 'C' });
    expect(env).toEqual({ PATH: '/usr/bin', TERM: 'xterm-256color', LANG: 'de_DE.UTF-8' });
  });
});
