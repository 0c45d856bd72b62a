// The firmware store (contract §9): binaries per version and platform, their bytes in the blob store
// by SHA-256, their records in `firmware`. The latest firmware per platform is what every heartbeat
// asks about, so it is cached for a few seconds (other servers' uploads show within that time).
import type { KeyObject } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import { invalidPosition, pageOfSorted, type Page, type PageKey, type PageRequest } from '../../platform/paging.js';
import type { BlobStorage } from './blob-store.js';
import { verifyFirmware } from './firmware-signature.js';
import * as repo from './firmware.repo.js';
import { compareVersions } from './versions.js';

export type Platform = 'freebsd' | 'linux' | 'windows';

export type Firmware = repo.FirmwareRow;

const LATEST_CACHE_MS = 5_000;

export class FirmwareService {
  #latest = new Map<string, { firmware: Firmware | undefined; until: number }>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly blobs: BlobStorage,
    private readonly clock: Clock,
    private readonly maxBytes: number,
    /** FIRMWARE_PUBLIC_KEY: when set, only uploads whose signature verifies with it are kept. */
    private readonly publicKey: KeyObject | null = null,
  ) {}

  /**
   * Stores a binary with its detached signature (base64, already checked for form; null for none);
   * 409 when the version exists for the platform, unless `replace`.
   */
  async upload(input: {
    version: string;
    platform: Platform;
    replace: boolean;
    body: Readable;
    signature: string | null;
    declaredSize?: number;
  }): Promise<Firmware> {
    const { version, platform, replace, signature } = input;
    if (input.declaredSize !== undefined && input.declaredSize > this.maxBytes) {
      throw new AppError('PAYLOAD_TOO_LARGE', `Larger than the limit of ${this.maxBytes} bytes (FIRMWARE_MAX_BYTES)`);
    }
    if (this.publicKey && signature === null) {
      throw new AppError('VALIDATION_ERROR', 'This server accepts only signed firmware: send the x-firmware-signature header (npm run cli -- firmware sign)');
    }
    // Refused before the bytes are read, when it is clear already.
    const previous = await this.find(platform, version);
    if (previous && !replace) throw this.#exists(platform, version);
    const blob = await this.blobs.receive(input.body, this.maxBytes);
    if (this.publicKey && !verifyFirmware(this.publicKey, { platform, version, sha256: blob.sha256 }, signature!)) {
      await this.#removeIfUnused(blob.sha256);
      throw new AppError('VALIDATION_ERROR', `The signature does not verify with FIRMWARE_PUBLIC_KEY for platform ${platform}, version ${version} and these bytes`);
    }
    const now = this.clock.now();
    const inserted = await repo.saveFirmware(this.db, { version, platform, sha256: blob.sha256, size: blob.size, created_at: now, signature }, replace);
    if (!inserted) {
      await this.#removeIfUnused(blob.sha256); // another upload of this version won the race
      throw this.#exists(platform, version);
    }
    if (previous && previous.sha256 !== inserted.sha256) await this.#removeIfUnused(previous.sha256);
    this.#latest.delete(platform);
    return inserted;
  }

  /**
   * Deletes one version (404 when there is none with that id); its file goes once no other firmware or
   * installer names the same bytes. This server's latest of the platform is forgotten at once, so agents
   * asked to update are offered the next highest version (or nothing) from their next heartbeat on;
   * other servers' caches follow within LATEST_CACHE_MS.
   */
  async delete(id: number): Promise<Firmware> {
    const deleted = await repo.deleteFirmware(this.db, id);
    if (!deleted) throw new AppError('NOT_FOUND', `No firmware with id ${id}`);
    this.#latest.delete(deleted.platform);
    await this.#removeIfUnused(deleted.sha256);
    return deleted;
  }

  /** Removes a blob once no record refers to it. */
  async #removeIfUnused(sha256: string): Promise<void> {
    if (!(await repo.isBlobReferenced(this.db, sha256))) await this.blobs.remove(sha256);
  }

  /**
   * By platform, then newest version first (numeric-aware, which SQL cannot order by), paged in memory:
   * a few versions per platform, not thousands. The position is (platform, version), unique.
   */
  async list(platform: Platform | undefined, page: PageRequest): Promise<Page<Firmware>> {
    const after = page.after;
    if (after !== null && (after.length !== 2 || !after.every((v) => typeof v === 'string' && v.length <= 64))) throw invalidPosition();
    const rows = await repo.listFirmware(this.db, platform);
    const compare = (a: PageKey, b: PageKey) => String(a[0]).localeCompare(String(b[0])) || compareVersions(String(b[1]), String(a[1]));
    const keyOf = (f: Firmware): PageKey => [f.platform, f.version];
    return pageOfSorted(rows.sort((a, b) => compare(keyOf(a), keyOf(b))), page, keyOf, compare);
  }

  async find(platform: Platform, version: string): Promise<Firmware | undefined> {
    return repo.findFirmware(this.db, platform, version);
  }

  /** The highest version for the platform (numeric-aware), or undefined. */
  async latest(platform: Platform): Promise<Firmware | undefined> {
    const rows = await repo.listFirmware(this.db, platform);
    return rows.sort((a, b) => compareVersions(b.version, a.version))[0];
  }

  /** latest(), cached briefly: every heartbeat with a pending update asks. */
  async latestCached(platform: Platform): Promise<Firmware | undefined> {
    const now = this.clock.now().getTime();
    const cached = this.#latest.get(platform);
    if (cached && cached.until > now) return cached.firmware;
    const firmware = await this.latest(platform);
    this.#latest.set(platform, { firmware, until: now + LATEST_CACHE_MS });
    return firmware;
  }

  /** The binary to send: the given version, or the latest. 404 when there is none (or its file is gone). */
  async download(platform: Platform, version?: string): Promise<{ firmware: Firmware; stream: Readable }> {
    const firmware = version ? await this.find(platform, version) : await this.latest(platform);
    if (!firmware) throw new AppError('NOT_FOUND', version ? `No firmware ${version} for ${platform}` : `No firmware for ${platform}`);
    const blob = await this.blobs.open(firmware.sha256);
    if (!blob) throw new AppError('NOT_FOUND', `The file of firmware ${firmware.version} for ${platform} is missing on this server`);
    return { firmware, stream: blob.stream };
  }

  #exists(platform: string, version: string): AppError {
    return new AppError('CONFLICT', `Firmware ${version} for ${platform} exists; upload with replace=true to replace it`);
  }
}
