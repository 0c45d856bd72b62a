// The line diff between two backups: a unified diff (3 lines of context, `---`/`+++` headers naming the
// backups and their times) with the counts of added and removed lines. Myers' algorithm costs about the
// square of the number of changed lines and runs on the event loop, so the work is bounded: beyond
// MAX_DIFF_CHANGED_LINES changed lines (about 0.3 s here), or DIFF_TIMEOUT_MS as a last resort, it gives up.
import { FILE_HEADERS_ONLY, formatPatch, structuredPatch } from 'diff';

/** At most this many added plus removed lines are computed; more is refused. */
export const MAX_DIFF_CHANGED_LINES = 2000;
/** A guard against slow cases the line limit does not catch; normally never reached. */
export const DIFF_TIMEOUT_MS = 3000;

export interface DiffSide {
  id: number;
  created_at: Date;
  content: string;
}

export interface LineDiff {
  /** Unified diff from `a` to `b`; "" when the contents are equal. */
  diff: string;
  added: number;
  removed: number;
}

/** The diff from `a` to `b`, or null when they differ too much to compute it within the limits. */
export function diffBackups(a: DiffSide, b: DiffSide): LineDiff | null {
  const patch = structuredPatch(
    `backup-${a.id}.xml`,
    `backup-${b.id}.xml`,
    a.content,
    b.content,
    a.created_at.toISOString(),
    b.created_at.toISOString(),
    { context: 3, maxEditLength: MAX_DIFF_CHANGED_LINES, timeout: DIFF_TIMEOUT_MS },
  );
  if (!patch) return null;
  let added = 0;
  let removed = 0;
  for (const hunk of patch.hunks) {
    for (const line of hunk.lines) {
      if (line.startsWith('+')) added++;
      else if (line.startsWith('-')) removed++;
    }
  }
  return { diff: patch.hunks.length === 0 ? '' : formatPatch(patch, FILE_HEADERS_ONLY), added, removed };
}
