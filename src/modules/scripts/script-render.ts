// A saved script and its parameter values as the one command line the agent's exec runs (/bin/sh -c on
// Linux and FreeBSD, cmd.exe /c on Windows). Parameters reach the script as environment variables
// ($NAME in sh and bash, $env:NAME in PowerShell, %NAME% in cmd), each value quoted for its shell, so
// a value is data and never code.
import type { ScriptShell } from '../../db/schema.js';
import { AppError } from '../../platform/errors.js';
import { powershellQuote, shellQuote } from '../install/install-scripts.js';

/** The agent's exec takes commands up to this many characters (contract: exec body). */
export const MAX_COMMAND_CHARS = 10_000;

// cmd.exe has no quoting that makes these safe inside `set "NAME=value"`.
const CMD_UNSAFE = /["%&|<>^\r\n]/;

export function renderScript(shell: ScriptShell, body: string, values: ReadonlyArray<readonly [name: string, value: string]>): string {
  const command = render(shell, body, values);
  if (command.length > MAX_COMMAND_CHARS) {
    throw new AppError('VALIDATION_ERROR', `The script with its parameters is ${command.length} characters; the agent runs at most ${MAX_COMMAND_CHARS}`);
  }
  return command;
}

function render(shell: ScriptShell, body: string, values: ReadonlyArray<readonly [string, string]>): string {
  switch (shell) {
    case 'sh': {
      if (values.length === 0) return body;
      const assignments = values.map(([name, value]) => `${name}=${shellQuote(value)}`).join(' ');
      return `${assignments}; export ${values.map(([name]) => name).join(' ')}\n${body}`;
    }
    case 'bash': {
      const assignments = values.map(([name, value]) => `${name}=${shellQuote(value)} `).join('');
      return `${assignments}bash -c ${shellQuote(body)}`;
    }
    case 'powershell': {
      const assignments = values.map(([name, value]) => `$env:${name} = ${powershellQuote(value)}\n`).join('');
      const encoded = Buffer.from(`${assignments}${body}`, 'utf16le').toString('base64');
      return `powershell -NoProfile -NonInteractive -ExecutionPolicy Bypass -EncodedCommand ${encoded}`;
    }
    case 'cmd': {
      const bad = values.find(([, value]) => CMD_UNSAFE.test(value));
      if (bad) throw new AppError('VALIDATION_ERROR', `A cmd script's parameter ${bad[0]} cannot hold " % & | < > ^ or a line break`);
      const lines = body.split(/\r?\n/).filter((line) => line.trim() !== '');
      return [...values.map(([name, value]) => `set "${name}=${value}"`), ...lines].join(' & ');
    }
  }
}
