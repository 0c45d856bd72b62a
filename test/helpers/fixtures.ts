// The shared fixtures (realistic heartbeats, a firewall config) live beside the repository, in
// ../shared/fixtures, as they do on the development machines and in CI.
import { readFileSync } from 'node:fs';
import path from 'node:path';

const FIXTURES = path.resolve(import.meta.dirname, '../../../shared/fixtures');

/** The exact text of a fixture file. */
export function fixtureText(name: string): string {
  return readFileSync(path.join(FIXTURES, name), 'utf8');
}
