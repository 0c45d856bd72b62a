// What the updater keeps on disk next to the binary it looks after, so that a restarted (or killed)
// updater knows where it stood:
// - `<binary>.update.json`, the update record: written before the old binary is touched and removed
//   only once the new binary passed its health check or the previous one runs again. Its phase says
//   what a restarted updater does: finish the installation's check, finish the rollback, or report.
// - `<binary>.update-memory.json`: firmware refused here (hash, signature, health check) with the time
//   it may be tried again, and a report the server could not be told yet.
// Both are written atomically (temporary file, fsync, rename, fsync of the directory).
import { randomBytes } from 'node:crypto';
import { open, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';

const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);

const recordSchema = z.object({
  /**
   * installing: the old binary is being stopped and replaced; checking: the new binary runs and is under
   * its health check; passed: it passed, the server is still to be told; rolling-back: the previous
   * binary is being put back and started (retried until it runs).
   */
  phase: z.enum(['installing', 'checking', 'passed', 'rolling-back']),
  version: z.string(),
  sha256: sha256Hex,
  signature: z.string().nullable(),
  /** Where the previous binary is kept, and its hash (to tell whether it is installed again). */
  previous: z.string(),
  previous_sha256: sha256Hex,
  /** Device time the installation started (for the log). */
  started_at: z.string(),
  /** The server's last heartbeat time of the agent before the new binary started: only later ones count. */
  baseline: z.string().nullable(),
  /**
   * The health check's progress (health-check.ts): device time the new binary was started (records of
   * older updaters lack it: started_at stands in), time the server could not be asked, and the counted
   * time of the first heartbeat. The check's deadlines run from here across restarts of the updater.
   */
  check_started_at: z.string().optional(),
  uncounted_ms: z.number().int().min(0).optional(),
  first_heartbeat_ms: z.number().int().min(0).optional(),
  /** Why the rollback (phase rolling-back). */
  reason: z.string().optional(),
});

export type UpdateRecord = z.infer<typeof recordSchema>;
export type UpdatePhase = UpdateRecord['phase'];

export const reportStates = ['installing', 'healthy', 'rolled_back', 'rollback_failed', 'refused'] as const;
const reportSchema = z.object({
  state: z.enum(reportStates),
  version: z.string().optional(),
  sha256: z.string().optional(),
  message: z.string().optional(),
});

/** A report to POST /agents/{id}/updater-report. */
export type UpdaterReport = z.infer<typeof reportSchema>;

const refusalSchema = z.object({
  sha256: sha256Hex,
  signature: z.string().nullable(),
  version: z.string(),
  reason: z.string(),
  /** How often this firmware failed here; the wait before the next try doubles with each. */
  failures: z.number().int().min(1),
  /** Device time (ISO) from which it may be tried again. */
  retry_at: z.string(),
});

export type Refusal = z.infer<typeof refusalSchema>;

const memorySchema = z.object({
  refusal: refusalSchema.optional(),
  unsent_report: reportSchema.optional(),
});

export type UpdaterMemory = z.infer<typeof memorySchema>;

export class UpdateStateFiles {
  readonly recordPath: string;
  readonly memoryPath: string;

  constructor(binaryPath: string) {
    this.recordPath = `${binaryPath}.update.json`;
    this.memoryPath = `${binaryPath}.update-memory.json`;
  }

  /** The update record, null when there is none; throws when it exists but cannot be read. */
  async readRecord(): Promise<UpdateRecord | null> {
    const text = await readFile(this.recordPath, 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return null;
      throw err;
    });
    if (text === null) return null;
    const parsed = recordSchema.safeParse(parseJson(text));
    if (!parsed.success) throw new Error(`${this.recordPath} is not a valid update record`);
    return parsed.data;
  }

  writeRecord(record: UpdateRecord): Promise<void> {
    return writeFileAtomic(this.recordPath, `${JSON.stringify(record, null, 2)}\n`);
  }

  async removeRecord(): Promise<void> {
    await rm(this.recordPath, { force: true });
    await syncDirectory(path.dirname(this.recordPath));
  }

  /** The memory; an unreadable one is started afresh (it only ever saves work, never safety). */
  async readMemory(): Promise<UpdaterMemory> {
    const text = await readFile(this.memoryPath, 'utf8').catch(() => null);
    if (text === null) return {};
    const parsed = memorySchema.safeParse(parseJson(text));
    return parsed.success ? parsed.data : {};
  }

  async writeMemory(memory: UpdaterMemory): Promise<void> {
    if (memory.refusal === undefined && memory.unsent_report === undefined) {
      await rm(this.memoryPath, { force: true });
      return;
    }
    await writeFileAtomic(this.memoryPath, `${JSON.stringify(memory, null, 2)}\n`);
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Writes `file` so that after a crash or power loss it holds either the old or the new content. */
export async function writeFileAtomic(file: string, content: string): Promise<void> {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const handle = await open(temp, 'w', 0o600);
    try {
      await handle.writeFile(content, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
  await syncDirectory(path.dirname(file));
}

/** fsync of a file's contents (a copied or downloaded binary) before a rename relies on them. */
export async function syncFile(file: string): Promise<void> {
  const handle = await open(file, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** fsync of a directory, so a rename in it survives a power loss; not possible everywhere (Windows). */
export async function syncDirectory(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Directories cannot be opened or synced on some systems; the rename itself is still atomic.
  }
}
