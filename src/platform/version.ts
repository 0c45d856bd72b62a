// The product version from package.json, found by walking up from this file, so it works from src/
// (tsx, tests) and from dist/src/ (the compiled server) alike.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

export function productVersion(): string {
  if (cached) return cached;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, 'package.json');
    if (existsSync(candidate)) {
      cached = (JSON.parse(readFileSync(candidate, 'utf8')) as { version?: string }).version ?? '0.0.0';
      return cached;
    }
    const parent = path.dirname(dir);
    if (parent === dir) return '0.0.0';
    dir = parent;
  }
}
