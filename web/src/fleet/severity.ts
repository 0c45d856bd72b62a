// How the fleet page ranks what needs attention (issue 33, Build 5): by the most severe reason an agent
// has, in this order, each with its own colour. Agents whose only reason is updates available are many
// on any fleet and the least urgent, so they become one count line instead of a row each.
import type { AttentionItem } from './fleet-data';

export type ReasonKind = AttentionItem['reasons'][number]['kind'];

/** The groups, most severe first; a group covers one or more reason kinds. */
export const SEVERITIES = [
  { id: 'offline', label: 'Offline', kinds: ['offline'] },
  { id: 'stale', label: 'Stale', kinds: ['stale'] },
  { id: 'certificate', label: 'Certificates expired or expiring', kinds: ['certificate_expired', 'certificate_expiring'] },
  { id: 'disk', label: 'Disks nearly full', kinds: ['disk_full'] },
  { id: 'updates', label: 'Updates available', kinds: ['updates_available'] },
] as const satisfies ReadonlyArray<{ id: string; label: string; kinds: readonly ReasonKind[] }>;

export type SeverityId = (typeof SEVERITIES)[number]['id'];

const RANK = new Map<ReasonKind, number>(SEVERITIES.flatMap((s, rank) => s.kinds.map((k) => [k, rank] as const)));

/** A reason kind's group (its colour, its place). Unknown kinds from a newer server rank last. */
export function severityOf(kind: ReasonKind): SeverityId {
  return SEVERITIES[RANK.get(kind) ?? SEVERITIES.length - 1]!.id;
}

const rankOf = (kind: ReasonKind) => RANK.get(kind) ?? SEVERITIES.length;

export interface RankedAttention {
  /** Agents with a reason more severe than updates, most severe first; each one's reasons likewise. */
  ranked: AttentionItem[];
  /** Agents whose only reason is updates available, and how many packages they wait for in all. */
  updatesOnly: AttentionItem[];
  updatePackages: number;
  /** Per group, how many agents have at least one reason in it. */
  counts: Record<SeverityId, number>;
}

export function rankAttention(items: readonly AttentionItem[]): RankedAttention {
  const counts = Object.fromEntries(SEVERITIES.map((s) => [s.id, 0])) as Record<SeverityId, number>;
  const sorted = items.map((item) => ({ ...item, reasons: [...item.reasons].sort((a, b) => rankOf(a.kind) - rankOf(b.kind)) }));
  for (const item of sorted) for (const id of new Set(item.reasons.map((r) => severityOf(r.kind)))) counts[id]++;
  const top = (item: AttentionItem) => rankOf(item.reasons[0]!.kind);
  // Stable sort: within a group the server's order (by name) stays.
  const ranked = sorted.filter((i) => severityOf(i.reasons[0]!.kind) !== 'updates').sort((a, b) => top(a) - top(b));
  const updatesOnly = sorted.filter((i) => severityOf(i.reasons[0]!.kind) === 'updates');
  return { ranked, updatesOnly, updatePackages: updatesOnly.reduce((sum, i) => sum + packagesOf(i), 0), counts };
}

const packagesOf = (item: AttentionItem) => item.reasons.find((r) => r.kind === 'updates_available')?.packages ?? 0;
