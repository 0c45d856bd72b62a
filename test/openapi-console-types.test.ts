// The web console's API types (web/src/api/openapi.gen.ts) are generated from the OpenAPI document the
// server serves (scripts/openapi-types.ts, run by `npm run typecheck`). The committed file must be what
// this server's document gives, or editors and `vite` would work with a stale API; and the document must
// not depend on the server's configuration, or the file would change with whoever generated it.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_TYPES_FILE, consoleTypesOf } from '../scripts/openapi-types.js';
import { buildTestApp, type TestApp } from './helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  // Another configuration than the script's (which has none but a data directory): the types must not care.
  t = await buildTestApp({ env: { PUBLIC_URL: 'https://rmm.example.net' } });
});
afterAll(() => t.close());

describe("the console's generated API types", () => {
  it('are committed as the served document gives them (run npm run typecheck and commit the file if not)', async () => {
    const document = JSON.parse((await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).body) as Record<string, unknown>;
    const committed = await readFile(CONSOLE_TYPES_FILE, 'utf8');
    expect((await consoleTypesOf(document)) === committed, 'web/src/api/openapi.gen.ts is stale').toBe(true);
  }, 60_000);
});
