// Paths the agent accepts for file commands (issue 59): absolute only (POSIX `/…`, Windows `C:\…` or
// `C:/…`), no NUL byte, no `..` segment (a traversal is refused, not resolved), then normalized. Errors
// start with a stable prefix the server maps to an HTTP status (see FS_ERROR_PREFIXES).
import path from 'node:path';
import { CommandError } from '../commands/command-error.js';

/**
 * Stable beginnings of the agent's file errors; the server maps them to 400, 404 and 409. Other
 * agents may use them too (docs/device-files.md).
 */
export const FS_ERROR_PREFIXES = {
  invalid: 'invalid path:',
  notFound: 'not found:',
  exists: 'already exists:',
  notEmpty: 'not empty:',
  notDir: 'not a directory:',
  isDir: 'is a directory:',
  denied: 'permission denied:',
  mismatch: 'sha256 mismatch:',
} as const;

const WINDOWS_ABSOLUTE = /^[A-Za-z]:[\\/]/;

/** The normalized absolute path, or a CommandError starting with `invalid path:`. */
export function checkedPath(raw: string, windows = process.platform === 'win32'): string {
  const refuse = (why: string) => new CommandError(`${FS_ERROR_PREFIXES.invalid} ${why}`);
  if (raw.includes('\0')) throw refuse('it contains a NUL byte');
  const isWindowsPath = WINDOWS_ABSOLUTE.test(raw);
  if (!raw.startsWith('/') && !isWindowsPath) throw refuse(`${JSON.stringify(raw.slice(0, 200))} is not absolute`);
  if (isWindowsPath && !windows) throw refuse(`${JSON.stringify(raw.slice(0, 200))} is a Windows path on a POSIX device`);
  const segments = raw.split(windows ? /[\\/]/ : /\//);
  if (segments.includes('..')) throw refuse(`${JSON.stringify(raw.slice(0, 200))} contains a ".." segment`);
  return windows ? path.win32.normalize(raw) : path.posix.normalize(raw);
}

/** A Node file-system error as a CommandError with the stable prefix of its kind. */
export function fsError(err: unknown, target: string): CommandError {
  const code = (err as NodeJS.ErrnoException).code;
  const message = (err as Error).message;
  const prefix =
    code === 'ENOENT'
      ? FS_ERROR_PREFIXES.notFound
      : code === 'EEXIST'
        ? FS_ERROR_PREFIXES.exists
        : code === 'ENOTEMPTY'
          ? FS_ERROR_PREFIXES.notEmpty
          : code === 'ENOTDIR'
            ? FS_ERROR_PREFIXES.notDir
            : code === 'EISDIR'
              ? FS_ERROR_PREFIXES.isDir
              : code === 'EACCES' || code === 'EPERM'
                ? FS_ERROR_PREFIXES.denied
                : null;
  if (err instanceof CommandError) return err;
  return new CommandError(prefix ? `${prefix} ${target} (${code})` : `${target}: ${message}`);
}
