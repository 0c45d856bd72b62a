// One SHA-256 over a set of source files (names and contents, in a stable order): what a build step
// compares with the hash it stamped last time to skip work whose sources did not change. Hashed, not
// dated: a checkout or a copy that keeps old dates is still seen. Plain JavaScript, no dependencies:
// scripts/build.mjs runs it before anything is compiled.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * @param {string} root the repository's folder
 * @param {{ dirs: string[]; files: string[]; skip: (file: string) => boolean }} sources folders walked
 *   (files for which `skip` is true left out) and single files, relative to `root`
 * @returns {string} the hash in hex
 */
export function sourceHash(root, { dirs, files, skip }) {
  const all = [...files];
  for (const dir of dirs) {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true, recursive: true })) {
      const file = path.relative(root, path.join(entry.parentPath, entry.name));
      if (entry.isFile() && !skip(file)) all.push(file);
    }
  }
  const hash = createHash('sha256');
  for (const file of all.sort()) hash.update(file).update('\0').update(readFileSync(path.join(root, file))).update('\0');
  return hash.digest('hex');
}
