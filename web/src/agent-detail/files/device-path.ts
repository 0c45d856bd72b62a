// Paths on the device as its own system writes them: `/var/log` on Linux and FreeBSD, `C:\Users` on
// Windows. The agent answers every listing with the directory's full path; these helpers only split
// and join it for the breadcrumbs and the row actions, and never resolve `..` (the agent refuses it).

/** Windows paths start with a drive letter or use backslashes. */
function separatorOf(path: string): '/' | '\\' {
  return /^[A-Za-z]:/.test(path) || path.includes('\\') ? '\\' : '/';
}

/** The directory a new listing starts at when the URL names none. */
export function homePath(platform: string | null): string {
  return platform === 'windows' ? 'C:\\' : '/';
}

export function joinPath(directory: string, name: string): string {
  const separator = separatorOf(directory);
  return directory.endsWith(separator) ? `${directory}${name}` : `${directory}${separator}${name}`;
}

export interface Crumb {
  label: string;
  path: string;
}

/** `/var/log` → `/`, `var`, `log`; `C:\Users\ann` → `C:\`, `Users`, `ann`; each with its own full path. */
export function crumbsOf(path: string): Crumb[] {
  const separator = separatorOf(path);
  const parts = path.split(separator).filter(Boolean);
  if (separator === '/') {
    return [{ label: '/', path: '/' }, ...parts.map((part, i) => ({ label: part, path: `/${parts.slice(0, i + 1).join('/')}` }))];
  }
  const [drive, ...rest] = parts;
  if (drive === undefined) return [{ label: path, path }];
  const root = `${drive}\\`;
  return [{ label: root, path: root }, ...rest.map((part, i) => ({ label: part, path: `${root}${rest.slice(0, i + 1).join('\\')}` }))];
}
