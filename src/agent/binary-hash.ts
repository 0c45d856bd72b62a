// The SHA-256 of the agent's installed binary, which every heartbeat reports as `agent_sha256` (contract
// §2): the server compares it with the latest firmware and clears the agent's update request once they
// match. Hashed at start and again only when the file changes (the updater renames a new file over it:
// another inode; an in-place write: another size, mtime or ctime), so a heartbeat costs one stat, not a
// read of the whole binary.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';

export class BinaryHash {
  #known: { identity: string; sha256: string } | null = null;
  #lastProblem = '';

  constructor(
    readonly path: string,
    private readonly log: (line: string) => void,
  ) {}

  /** The file's SHA-256 now (lowercase hex); undefined while it cannot be read, which is logged once. */
  async current(): Promise<string | undefined> {
    try {
      const info = await stat(this.path);
      const identity = `${info.dev}:${info.ino}:${info.size}:${info.mtimeMs}:${info.ctimeMs}`;
      if (this.#known?.identity !== identity) {
        const hash = createHash('sha256');
        await pipeline(createReadStream(this.path), hash);
        this.#known = { identity, sha256: hash.digest('hex') };
        this.log(`agent binary ${this.path}: SHA-256 ${this.#known.sha256}`);
      }
      this.#lastProblem = '';
      return this.#known.sha256;
    } catch (err) {
      const problem = (err as Error).message;
      if (problem !== this.#lastProblem) this.log(`agent binary ${this.path} cannot be read, heartbeats go without agent_sha256: ${problem}`);
      this.#lastProblem = problem;
      this.#known = null;
      return undefined;
    }
  }
}
