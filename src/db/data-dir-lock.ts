// A pid lock file in DATA_DIR. PGlite has no multi-process protection of its own, so a second server
// started on the same directory must refuse rather than corrupt the data. A lock left behind by a
// process that no longer exists (a crash) is taken over.
import { open, readFile, unlink } from 'node:fs/promises';
import path from 'node:path';

export interface DataDirLock {
  release(): Promise<void>;
}

/** Another live process (normally the running server) holds DATA_DIR. */
export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(`DATA_DIR ${dataDir} is in use by process ${pid}; stop it first or use another DATA_DIR`);
    this.name = 'DataDirInUseError';
  }
}

export async function acquireDataDirLock(dataDir: string): Promise<DataDirLock> {
  const file = path.join(dataDir, 'server.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(file, 'wx', 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      return { release: () => unlink(file).catch(() => undefined) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number((await readFile(file, 'utf8').catch(() => '')).trim());
      // Our own pid in the file is a leftover too: in a container the restarted server is pid 1 again.
      if (owner && owner !== process.pid && isAlive(owner)) {
        throw new DataDirInUseError(dataDir, owner);
      }
      await unlink(file).catch(() => undefined);
    }
  }
  throw new Error(`could not lock DATA_DIR ${dataDir}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
