// On a fresh clone (CI) vitest knows no file's duration and starts the largest files first, so some of
// the longest (the console at every size, the 10,000-agent paging, the CLI and process tests) started
// late and ran on alone at the end of a pass while the other workers idled. This starts them first when
// vitest has no timings for the run; with timings from an earlier run (the second CI pass, local runs)
// vitest's own order (failed first, then longest) stands.
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** The longest files of the CI run of 2026-11-26 (both passes), longest first. */
const SLOWEST = [
  'test/e2e/console-sizes.test.ts',
  'test/agents-pagination.test.ts',
  'test/cli.test.ts',
  'test/main.test.ts',
  'test/backup-restore.test.ts',
  'test/metrics-compaction.test.ts',
  'test/cluster.test.ts',
  'test/openapi-fuzz.test.ts',
  'test/e2e/console-alerts.test.ts',
  'test/installer-bomb.test.ts',
  'test/openapi-tooling.test.ts',
  'test/e2e/console-roles.test.ts',
  'test/callstatus-main.test.ts',
  'test/e2e/console-fleet-load.test.ts',
  'test/demo.test.ts',
  'test/alerts-delivery-retries.test.ts',
];

export default class SlowestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const fileOf = (spec: TestSpecification) => path.relative(this.ctx.config.root, spec.moduleId).split(path.sep).join('/');
    const timed = files.every((spec) => this.ctx.cache.getFileTestResults(`${spec.project.name}:${fileOf(spec)}`));
    if (timed) return sorted;
    const rank = (spec: TestSpecification) => {
      const at = SLOWEST.indexOf(fileOf(spec));
      return at < 0 ? SLOWEST.length : at;
    };
    return [...sorted].sort((a, b) => rank(a) - rank(b));
  }
}
