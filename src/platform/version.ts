// The package root and the product version from its package.json, found by walking up from this file,
// so they work from src/ (tsx, tests) and from dist/src/ (the compiled server) alike.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let cachedRoot: string | null | undefined;
let cachedVersion: string | undefined;

/** The directory holding the project's package.json, or null when there is none above this file. */
export function packageRoot(): string | null {
  if (cachedRoot !== undefined) return cachedRoot;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return (cachedRoot = dir);
    const parent = path.dirname(dir);
    if (parent === dir) return (cachedRoot = null);
    dir = parent;
  }
}

export function productVersion(): string {
  if (cachedVersion) return cachedVersion;
  const root = packageRoot();
  if (!root) return '0.0.0';
  cachedVersion = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version?: string }).version ?? '0.0.0';
  return cachedVersion;
}
