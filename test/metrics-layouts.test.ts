// The layout cache against a real database: the same list finds its id without another upsert, and
// lists that differ in any position, or only in where one label ends, get layouts of their own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb } from './helpers/db.js';
import type { DbHandle } from '../src/db/create-db.js';
import type { ExtractedSample, MetricName } from '../src/modules/metrics/extract-samples.js';
import { LayoutRegistry } from '../src/modules/metrics/layouts.js';

let handle: DbHandle;
beforeAll(async () => {
  handle = await createTestDb();
});
afterAll(() => handle.close());

const list = (...positions: Array<[MetricName, string]>): ExtractedSample[] => positions.map(([metric, label], i) => ({ metric, label, value: i }));
const storedLayouts = async () => (await handle.db.selectFrom('metric_layouts').select(['id', 'metrics', 'labels']).orderBy('id').execute());

describe('LayoutRegistry', () => {
  it('stores each distinct list once and gives every heartbeat its own list\'s id', async () => {
    const registry = new LayoutRegistry(handle.db);
    const disks = list(['cpu_usage', ''], ['disk_used_percent', '/'], ['disk_used_percent', '/var']);
    const reordered = list(['cpu_usage', ''], ['disk_used_percent', '/var'], ['disk_used_percent', '/']);
    // The same characters, split differently between two labels.
    const splitA = list(['interface_rx_bytes', 'ab'], ['interface_rx_bytes', '']);
    const splitB = list(['interface_rx_bytes', 'a'], ['interface_rx_bytes', 'b']);

    const first = await registry.idsFor([disks, reordered, splitA, splitB, disks.map((s) => ({ ...s, value: s.value + 1 }))]);
    expect(new Set(first.slice(0, 4)).size).toBe(4);
    expect(first[4]).toBe(first[0]);
    const rows = await storedLayouts();
    expect(rows).toHaveLength(4);
    expect(rows.find((r) => r.id === first[3])).toMatchObject({ metrics: ['interface_rx_bytes', 'interface_rx_bytes'], labels: ['a', 'b'] });
    expect(rows.find((r) => r.id === first[1])).toMatchObject({ labels: ['', '/var', '/'] });

    // Known lists: the same ids, and nothing written.
    expect(await registry.idsFor([splitB, disks])).toEqual([first[3], first[0]]);
    expect(await storedLayouts()).toHaveLength(4);

    // Another server (or this one after a restart) finds the stored rows rather than duplicating them.
    const restarted = new LayoutRegistry(handle.db);
    expect(await restarted.idsFor([reordered, list(['memory_used_percent', ''])])).toEqual([first[1], expect.any(Number)]);
    expect(await storedLayouts()).toHaveLength(5);
  });
});
