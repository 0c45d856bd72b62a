// Reads the server's unified diff into lines with their old/new line numbers, and pairs removed with
// added lines for the side-by-side layout. Hunk headers' line counts decide where a hunk ends, so a
// configuration line that itself starts with "---" or "@@" is never mistaken for a header.
export type DiffLineKind = 'meta' | 'hunk' | 'context' | 'add' | 'del' | 'note';

export interface DiffLine {
  kind: DiffLineKind;
  /** The line without its +/-/space marker. */
  text: string;
  oldNo?: number;
  newNo?: number;
}

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

export function parseUnifiedDiff(diff: string): DiffLine[] {
  const raw = diff.split('\n');
  if (raw[raw.length - 1] === '') raw.pop();
  const lines: DiffLine[] = [];
  let oldNo = 0;
  let newNo = 0;
  let oldLeft = 0;
  let newLeft = 0;
  for (const line of raw) {
    if (line.startsWith('\\')) {
      lines.push({ kind: 'note', text: line.slice(1).trim() });
      continue;
    }
    if (oldLeft > 0 || newLeft > 0) {
      const mark = line[0];
      const text = line.slice(1);
      if (mark === '+') {
        lines.push({ kind: 'add', text, newNo: newNo++ });
        newLeft--;
      } else if (mark === '-') {
        lines.push({ kind: 'del', text, oldNo: oldNo++ });
        oldLeft--;
      } else {
        // ' ' as usual; an empty line is an empty context line some tools shorten.
        lines.push({ kind: 'context', text, oldNo: oldNo++, newNo: newNo++ });
        oldLeft--;
        newLeft--;
      }
      continue;
    }
    const hunk = HUNK_HEADER.exec(line);
    if (hunk) {
      oldNo = Number(hunk[1]);
      oldLeft = hunk[2] === undefined ? 1 : Number(hunk[2]);
      newNo = Number(hunk[3]);
      newLeft = hunk[4] === undefined ? 1 : Number(hunk[4]);
      lines.push({ kind: 'hunk', text: line });
    } else {
      lines.push({ kind: 'meta', text: line });
    }
  }
  return lines;
}

export interface SideCell {
  kind: 'context' | 'add' | 'del';
  no: number | undefined;
  text: string;
}

export type SideRow = { kind: 'meta' | 'hunk' | 'note'; text: string } | { kind: 'pair'; left: SideCell | undefined; right: SideCell | undefined };

/** Context lines sit on both sides; a run of removed lines faces the run of added lines that follows it. */
export function toSideBySide(lines: readonly DiffLine[]): SideRow[] {
  const rows: SideRow[] = [];
  let removed: DiffLine[] = [];
  let added: DiffLine[] = [];
  const flush = () => {
    for (let i = 0; i < Math.max(removed.length, added.length); i++) {
      const left = removed[i];
      const right = added[i];
      rows.push({
        kind: 'pair',
        left: left && { kind: 'del', no: left.oldNo, text: left.text },
        right: right && { kind: 'add', no: right.newNo, text: right.text },
      });
    }
    removed = [];
    added = [];
  };
  for (const line of lines) {
    if (line.kind === 'del') {
      if (added.length > 0) flush(); // a removal after additions starts a new change block
      removed.push(line);
    } else if (line.kind === 'add') {
      added.push(line);
    } else {
      flush();
      if (line.kind === 'context') {
        rows.push({ kind: 'pair', left: { kind: 'context', no: line.oldNo, text: line.text }, right: { kind: 'context', no: line.newNo, text: line.text } });
      } else {
        rows.push({ kind: line.kind, text: line.text });
      }
    }
  }
  flush();
  return rows;
}
