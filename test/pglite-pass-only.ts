// Test files that run in the PGlite pass only. CI runs the suite twice, on the embedded PGlite and on
// PostgreSQL (.ci/run), and the second pass is there for what the database changes: the same queries,
// migrations, locks and failures on the other engine. The files below test something the database does
// not take part in, or reaches only through API routes that files of their own test in both passes, so
// on PostgreSQL they only tested the same thing again: nearly a third of that pass's test time (470 of
// 1,603 s on 2026-11-28, two shared cores), while CI is asked to stay under 15 minutes. vitest.config.ts
// leaves them out when TEST_DATABASE_URL is set; a file named here that does not exist stops the run, so
// the list cannot go stale unnoticed.
export const PGLITE_PASS_ONLY: ReadonlyArray<{ files: readonly string[]; why: string }> = [
  {
    why: 'the console in a browser: pages, layout and flows over the API, whose routes are tested on both databases',
    // Not the two with fleets of 1,000 and 10,000 agents (console-fleet-load, console-agents-paging):
    // their counts and server-side sorting are the database's work and run in both passes.
    files: [
      'test/e2e/console-a11y.test.ts',
      'test/e2e/console-admin.test.ts',
      'test/e2e/console-agent-list.test.ts',
      'test/e2e/console-agent-tabs.test.ts',
      'test/e2e/console-alerts.test.ts',
      'test/e2e/console-defects.test.ts',
      'test/e2e/console-device-files.test.ts',
      'test/e2e/console-device-shell.test.ts',
      'test/e2e/console-onboarding.test.ts',
      'test/e2e/console-passkeys.test.ts',
      'test/e2e/console-roles.test.ts',
      'test/e2e/console-scripts.test.ts',
      'test/e2e/console-sizes.test.ts',
      'test/e2e/console-sso.test.ts',
      'test/e2e/console-terminal.test.ts',
      'test/e2e/console.test.ts',
    ],
  },
  {
    why: 'the API description and a client generated from it (Spectral, openapi-typescript): the document does not depend on the database',
    files: ['test/openapi-tooling.test.ts', 'test/openapi-console-types.test.ts'],
  },
  {
    why: "the on-device updater's health checks, rollbacks and resumed downloads (agent processes); its server side is tested on both in updater.test.ts",
    files: ['test/updater-health.test.ts', 'test/updater-resume.test.ts'],
  },
];
