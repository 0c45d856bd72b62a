// GET /hub/status in cluster mode: every live instance is asked for its own part over the bus (one
// request each, 2 s), and the parts are joined, each entry saying which instance it lives on. An
// instance that does not answer is listed as unreachable rather than failing the whole answer.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { HubStatusView } from '../agent-hub/hub-status.js';
import { INLINE_REPLY_LIMIT, type BigReplies } from './big-replies.js';
import type { ClusterBus } from './cluster-bus.js';
import { INSTANCE_DEAD_AFTER_MS } from './presence.js';
import { liveInstances } from './presence.repo.js';

const ASK_MS = 2_000;
const statusSubject = (instanceId: string) => `rmm.instance.${instanceId}.status`;

type Part = { view: HubStatusView } | { stored: string };

export class ClusterStatus {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly bus: ClusterBus,
    private readonly replies: BigReplies,
    private readonly instanceId: string,
    private readonly local: () => HubStatusView,
  ) {}

  /** Answers the other instances' questions about this one. */
  serve(): void {
    this.bus.subscribe(statusSubject(this.instanceId), async (): Promise<Part> => {
      const view = this.local();
      const json = JSON.stringify(view);
      return json.length > INLINE_REPLY_LIMIT ? { stored: await this.replies.store(json) } : { view };
    });
  }

  async gather(): Promise<HubStatusView> {
    const instances = await liveInstances(this.db, INSTANCE_DEAD_AFTER_MS);
    const parts = await Promise.all(
      instances.map(async (instance) => {
        const view = instance.id === this.instanceId ? this.local() : await this.#ask(instance.id);
        return { instance, view };
      }),
    );
    const all: HubStatusView = { agents: [], tunnels: [], pending_commands: 0, dropped_frames: 0, unknown_responses: 0, instances: [] };
    for (const { instance, view } of parts) {
      all.instances!.push({
        instance_id: instance.id,
        advertise_address: instance.advertise_address,
        started_at: instance.started_at.toISOString(),
        last_seen: instance.last_seen_at.toISOString(),
        reachable: view !== undefined,
        agents: view?.agents.length ?? 0,
        tunnels: view?.tunnels.length ?? 0,
      });
      if (!view) continue;
      all.agents.push(...view.agents.map((a) => ({ ...a, instance_id: instance.id })));
      all.tunnels.push(...view.tunnels.map((t) => ({ ...t, instance_id: instance.id })));
      all.pending_commands += view.pending_commands;
      all.dropped_frames += view.dropped_frames;
      all.unknown_responses += view.unknown_responses;
    }
    all.agents.sort((a, b) => a.agent_id.localeCompare(b.agent_id));
    return all;
  }

  async #ask(instanceId: string): Promise<HubStatusView | undefined> {
    if (!this.bus.available) return undefined;
    try {
      const part = (await this.bus.request(statusSubject(instanceId), null, ASK_MS)) as Part;
      return 'stored' in part ? ((await this.replies.take(part.stored)) as HubStatusView | undefined) : part.view;
    } catch {
      return undefined;
    }
  }
}
