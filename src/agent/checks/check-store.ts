// The last check set the server sent, kept in a file next to the agent's state file, so that after a
// restart the checks run again before the server is reached (a device that reboots into a broken
// network is exactly when its checks matter). Written atomically (temp file + rename), readable by the
// agent's user only: a set may hold library scripts.
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { checksSetParams, type ChecksSet } from '../../modules/checks/check-protocol.js';

/** `agent-state.json` → `agent-state.checks.json` in the same folder. */
export function checksFileFor(stateFile: string): string {
  const { dir, name } = path.parse(stateFile);
  return path.join(dir, `${name}.checks.json`);
}

export class CheckStore {
  private writes: Promise<void> = Promise.resolve();

  constructor(readonly file: string) {}

  /** The persisted set; null when there is none or it cannot be read (the reason goes to `log`). */
  async load(log: (line: string) => void = () => undefined): Promise<ChecksSet | null> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') log(`checks: cannot read ${this.file}: ${(err as Error).message}`);
      return null;
    }
    try {
      const parsed = checksSetParams.safeParse(JSON.parse(text));
      if (parsed.success) return parsed.data;
      log(`checks: ignoring ${this.file}: ${parsed.error.issues[0]?.message ?? 'not a check set'}`);
    } catch {
      log(`checks: ignoring ${this.file}: not JSON`);
    }
    return null;
  }

  /** Writes `set`; saves run one after the other, so the last one given is the one on disk. */
  save(set: ChecksSet): Promise<void> {
    const text = JSON.stringify(set);
    const tmp = `${this.file}.${process.pid}.tmp`;
    const write = this.writes.catch(() => undefined).then(async () => {
      try {
        await writeFile(tmp, text, { mode: 0o600 });
        await rename(tmp, this.file);
      } catch (err) {
        await rm(tmp, { force: true }).catch(() => undefined);
        throw err;
      }
    });
    this.writes = write;
    return write;
  }

  /** Resolves when every save given so far has ended. */
  async flush(): Promise<void> {
    await this.writes.catch(() => undefined);
  }
}
