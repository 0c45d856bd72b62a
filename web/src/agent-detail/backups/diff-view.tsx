// The two layouts of a backup diff: unified (one column, +/- lines coloured) and side by side (old on
// the left, new on the right). Lines are configuration text from the agent, rendered as text only.
import { useMemo } from 'react';
import { parseUnifiedDiff, toSideBySide, type DiffLine, type SideCell } from './diff-parse';
import { TableFrame } from '../../ui/table-frame';

export type DiffLayout = 'unified' | 'split';

const SIGN: Record<DiffLine['kind'], string> = { add: '+', del: '-', context: ' ', hunk: '', meta: '', note: '' };

export function DiffView({ diff, layout }: { diff: string; layout: DiffLayout }) {
  const lines = useMemo(() => parseUnifiedDiff(diff), [diff]);
  return layout === 'unified' ? <UnifiedDiff lines={lines} /> : <SideBySideDiff lines={lines} />;
}

function UnifiedDiff({ lines }: { lines: readonly DiffLine[] }) {
  return (
    <TableFrame label="Unified diff">
      <table className="diff-table diff-unified">
        <caption className="visually-hidden">Unified diff: removed lines start with -, added lines with +</caption>
        <colgroup>
          <col className="diff-no-col" />
          <col className="diff-no-col" />
          <col />
        </colgroup>
        <tbody>
          {lines.map((line, index) =>
            line.kind === 'meta' || line.kind === 'hunk' || line.kind === 'note' ? (
              <tr key={index} className={`diff-${line.kind}`}>
                <td colSpan={3}>{line.text}</td>
              </tr>
            ) : (
              <tr key={index} className={`diff-${line.kind}`}>
                <td className="diff-no">{line.oldNo}</td>
                <td className="diff-no">{line.newNo}</td>
                <td className="diff-text">
                  <span className="diff-sign">{SIGN[line.kind]}</span>
                  {line.text}
                </td>
              </tr>
            ),
          )}
        </tbody>
      </table>
    </TableFrame>
  );
}

function SideBySideDiff({ lines }: { lines: readonly DiffLine[] }) {
  const rows = useMemo(() => toSideBySide(lines), [lines]);
  return (
    <TableFrame label="Side-by-side diff">
      <table className="diff-table diff-split">
        <caption className="visually-hidden">Side-by-side diff: the older backup on the left, the newer on the right</caption>
        <colgroup>
          <col className="diff-no-col" />
          <col className="diff-half-col" />
          <col className="diff-no-col" />
          <col className="diff-half-col" />
        </colgroup>
        <tbody>
          {rows.map((row, index) =>
            row.kind === 'pair' ? (
              <tr key={index}>
                <SideCells cell={row.left} side="old" />
                <SideCells cell={row.right} side="new" />
              </tr>
            ) : (
              <tr key={index} className={`diff-${row.kind}`}>
                <td colSpan={4}>{row.text}</td>
              </tr>
            ),
          )}
        </tbody>
      </table>
    </TableFrame>
  );
}

function SideCells({ cell, side }: { cell: SideCell | undefined; side: 'old' | 'new' }) {
  if (!cell) {
    return (
      <>
        <td className="diff-no diff-blank" />
        <td className="diff-text diff-blank" aria-label={side === 'old' ? 'no line in the older backup' : 'no line in the newer backup'} />
      </>
    );
  }
  return (
    <>
      <td className={`diff-no diff-${cell.kind}`}>{cell.no}</td>
      <td className={`diff-text diff-${cell.kind}`}>
        <span className="diff-sign">{SIGN[cell.kind]}</span>
        {cell.text}
      </td>
    </>
  );
}
