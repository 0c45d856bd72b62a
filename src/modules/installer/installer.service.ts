// Installer packages (contract §9): one ZIP per platform, kept in the blob store shared with firmware.
// The download is the uploaded ZIP with rmm-agent.json put in, carrying where the agent reaches this
// server and the agent key it signs in with, so a freshly installed device needs no manual setup. That
// key belongs to the customer the package is for: the downloading key's own customer (a scoped caller
// can ask for no other), or the one an unscoped caller names; only an unscoped download without a
// customer carries the global installer_api_key from the settings.
import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import type { BlobStorage } from '../firmware/blob-store.js';
import { isBlobReferenced } from '../firmware/firmware.repo.js';
import { defaultCustomerOf, scopeAllows, scopeOf, type Caller } from '../auth/caller.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { InstallerKeyService } from './installer-keys.service.js';
import * as repo from './installer.repo.js';
import { AGENT_CONFIG_FILE, checkInstallerZip, packageWith, type PackageFile } from './zip-package.js';
import type { ZipOutput } from './zip-writer.js';

export type { InstallerRow } from './installer.repo.js';

export const INSTALLER_PLATFORMS = ['windows'] as const;
export type InstallerPlatform = (typeof INSTALLER_PLATFORMS)[number];

const notFound = (platform: string) => new AppError('NOT_FOUND', `No installer package has been uploaded for ${platform}`);
// A package stored before a check was added (reserved Windows names, look-alike separators) is not served.
const storedPackageRefused = (err: AppError) =>
  new AppError('CONFLICT', `The stored installer package no longer passes the upload checks; upload a corrected one. ${err.message}`, { cause: err });

export class InstallerService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly blobs: BlobStorage,
    private readonly settings: SettingsService,
    private readonly keys: InstallerKeyService,
    private readonly clock: Clock,
    /** Largest package accepted (FIRMWARE_MAX_BYTES); 413 above. */
    readonly maxBytes: number,
  ) {}

  /** Stores the ZIP streamed in `body` as the platform's package, replacing the previous one. */
  async upload(platform: InstallerPlatform, body: Readable): Promise<repo.InstallerRow> {
    const { sha256, size } = await this.blobs.receive(body, this.maxBytes, checkInstallerZip);
    let saved: { row: repo.InstallerRow; previous: repo.InstallerRow | undefined };
    try {
      saved = await this.db.transaction().execute(async (trx) => {
        const previous = await repo.lockInstaller(trx, platform);
        const row = await repo.saveInstaller(trx, { platform, sha256, size, created_at: this.clock.now() });
        return { row, previous };
      });
    } catch (err) {
      await this.removeUnlessReferenced(sha256);
      throw err;
    }
    if (saved.previous && saved.previous.sha256 !== sha256) await this.removeUnlessReferenced(saved.previous.sha256);
    return saved.row;
  }

  /** The platform's stored package; 404 when none was uploaded. */
  async get(platform: InstallerPlatform): Promise<repo.InstallerRow> {
    const row = await repo.findInstaller(this.db, platform);
    if (!row) throw notFound(platform);
    return row;
  }

  /** What a download would answer, without writing it (HEAD): 404 for no package or a customer out of reach. */
  async checkDownload(caller: Caller, platform: InstallerPlatform, customerId?: number): Promise<void> {
    await this.get(platform);
    const customer = this.packageCustomer(caller, customerId);
    if (customer !== null) await this.keys.view(caller, customer);
  }

  /**
   * The package as a ZIP stream (and its length) with rmm-agent.json added for the customer it is for
   * (see packageCustomer); 404 when none was uploaded or the customer is out of the caller's reach.
   */
  async download(caller: Caller, platform: InstallerPlatform, customerId?: number): Promise<ZipOutput> {
    await this.get(platform); // no key is made for a download that has no package
    const added = await this.agentConfigFile(this.packageCustomer(caller, customerId));
    // A second look covers a replacement that removed the old file between reading its row and opening it.
    for (let attempt = 0; attempt < 2; attempt++) {
      const row = await repo.findInstaller(this.db, platform);
      if (!row) break;
      // In cluster mode this fetches the package into the local cache first (random access needs a file).
      const file = await this.blobs.localPath(row.sha256);
      if (!file) continue;
      try {
        return await packageWith(file, added);
      } catch (err) {
        if (err instanceof AppError && err.code === 'VALIDATION_ERROR') throw storedPackageRefused(err);
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
    throw notFound(platform);
  }

  /**
   * The customer whose key the package carries, or null for the global one. A customer-scoped caller's
   * package is always its customer's (naming another is 404, as for anything outside its scope).
   */
  private packageCustomer(caller: Caller, customerId: number | undefined): number | null {
    if (customerId !== undefined && !scopeAllows(scopeOf(caller), customerId)) throw new AppError('NOT_FOUND', 'Customer not found');
    return customerId ?? defaultCustomerOf(caller);
  }

  /** rmm-agent.json with what is set; nothing set: no file, and the package goes out without it. */
  private async agentConfigFile(customerId: number | null): Promise<PackageFile | undefined> {
    const [urls, apiKey] = await Promise.all([
      this.settings.agentUrls(),
      customerId === null ? this.settings.secret('installer_api_key') : this.keys.keyFor(customerId),
    ]);
    const config: Record<string, string> = {};
    if (urls.backend_url) config.server_url = urls.backend_url;
    if (urls.ws_url) config.ws_url = urls.ws_url;
    if (apiKey) config.api_key = apiKey;
    if (Object.keys(config).length === 0) return undefined;
    return { name: AGENT_CONFIG_FILE, content: Buffer.from(`${JSON.stringify(config, null, 2)}\n`, 'utf8'), mtime: this.clock.now() };
  }

  /** Firmware and installers share the store: a blob goes only when no row of either names it. */
  private async removeUnlessReferenced(sha256: string): Promise<void> {
    if (!(await isBlobReferenced(this.db, sha256))) await this.blobs.remove(sha256);
  }
}
