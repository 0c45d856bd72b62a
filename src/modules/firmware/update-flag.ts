// The update request flag (spec "Update request flag", contract §2 and §9): set by operators, cleared by
// operators or the on-device updater, and read by every heartbeat. A heartbeat gets `update_available`
// when the flag is set and its platform has firmware whose SHA-256 differs from the agent's; when the
// agent already reports that SHA-256, the update has happened and the flag is cleared — unless the
// on-device updater reported that it is still checking the new binary (`installing`): then the updater
// clears it once the binary has passed its health window, or sets it again after a rollback.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { scopeOf, type Caller } from '../auth/caller.js';
import type { AgentService } from '../agents/agents.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import * as repo from './firmware.repo.js';
import type { FirmwareService, Platform } from './firmware.service.js';

export interface UpdateOffer {
  update_available: boolean;
  update?: { version: string; sha256: string; size: number; download_url: string; signature: string | null };
}

export class UpdateFlags {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly agents: AgentService,
    private readonly firmware: FirmwareService,
    private readonly settings: SettingsService,
    private readonly clock: Clock,
  ) {}

  async set(caller: Caller, agentId: string, requested: boolean): Promise<{ update_requested: boolean }> {
    const agent = await this.agents.get(caller, agentId); // 404 outside the caller's scope
    await repo.setUpdateRequested(this.db, agent.id, requested, this.clock.now());
    return { update_requested: requested };
  }

  /** Flags every agent the caller can see; returns how many that is. */
  async setAll(caller: Caller, platform?: Platform): Promise<{ updated: number }> {
    return { updated: await repo.requestUpdateForAll(this.db, scopeOf(caller), this.clock.now(), platform) };
  }

  /**
   * What a heartbeat answers about updates. `origin` (scheme://host of the request) builds the download
   * URL when the settings hold no backend_url.
   */
  async offer(agent: { id: string; platform: Platform; sha256: string | null; updateRequested: boolean }, origin: string): Promise<UpdateOffer> {
    if (!agent.updateRequested) return { update_available: false };
    const latest = await this.firmware.latestCached(agent.platform);
    if (!latest) return { update_available: false };
    // Clearing is decided on the uncached latest: with several servers, another one's upload of a newer
    // binary may not be in this cache yet, and the flag is meant for that one.
    if (agent.sha256 === latest.sha256 && agent.sha256 === (await this.firmware.latest(agent.platform))?.sha256) {
      await repo.clearUpdateRequestUnlessChecking(this.db, agent.id);
      return { update_available: false };
    }
    const base = (await this.settings.agentUrls()).backend_url ?? origin;
    const query = new URLSearchParams({ platform: latest.platform, version: latest.version });
    return {
      update_available: true,
      update: {
        version: latest.version,
        sha256: latest.sha256,
        size: latest.size,
        download_url: `${base.replace(/\/+$/, '')}/api/v1/firmware/download?${query.toString()}`,
        signature: latest.signature,
      },
    };
  }
}
