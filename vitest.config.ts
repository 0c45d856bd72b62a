import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two test files per core: most files spend much of their time waiting on sockets, timers and
    // child processes, so one per core left the cores half idle (measured on 2 cores: the PGlite pass
    // 282 s with 2 workers, 187 s with 4; 6 was no faster and timed out process-starting tests).
    maxWorkers: availableParallelism() * 2,
  },
});
