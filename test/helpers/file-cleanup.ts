// What a helper must undo when a test file ends: its data directories, the processes it started. The
// suite runs without isolation (vitest.config.ts, `isolate: false`): a worker imports a helper once and
// runs file after file with it, so an `afterAll` a helper registered on import ran after the first file
// of each worker only, and the directories and leftover processes of every later file stayed (about
// 150 data directories under the temporary directory after each run). Helpers register their cleaner
// here instead; test/each-file-setup.ts, which vitest runs before every file, runs them all after it.
const cleaners = new Set<() => Promise<void>>();

/** Runs `cleaner` after every test file from now on (it must be a no-op when it has nothing to undo). */
export function afterEveryFile(cleaner: () => Promise<void>): void {
  cleaners.add(cleaner);
}

/** Runs every registered cleaner; one that fails does not stop the others, and its error is thrown after. */
export async function runFileCleaners(): Promise<void> {
  const results = await Promise.allSettled([...cleaners].map((cleaner) => cleaner()));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}
