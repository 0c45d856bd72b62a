// A QR code drawn as SVG from React elements (no HTML strings, nothing the CSP would block), for a
// phone to scan: a WireGuard client configuration, a TOTP enrolment. Dark modules of a row are merged
// into one <rect> per run, which keeps a version-10 code at a few hundred elements.
import qrcode from 'qrcode-generator';
import { useMemo } from 'react';

/** Modules of white border the standard asks for around the code. */
const QUIET_ZONE = 4;

interface Run {
  row: number;
  col: number;
  length: number;
}

/** The dark runs of the code and its size, or null when the text is too long for any QR version. */
function qrRuns(text: string): { size: number; runs: Run[] } | null {
  const qr = qrcode(0, 'M');
  // The library writes one byte per UTF-16 unit; hand it the UTF-8 bytes so any text survives.
  let bytes = '';
  for (const byte of new TextEncoder().encode(text)) bytes += String.fromCharCode(byte);
  try {
    qr.addData(bytes, 'Byte');
    qr.make();
  } catch {
    return null;
  }
  const size = qr.getModuleCount();
  const runs: Run[] = [];
  for (let row = 0; row < size; row++) {
    let start = -1;
    for (let col = 0; col <= size; col++) {
      const dark = col < size && qr.isDark(row, col);
      if (dark && start < 0) start = col;
      if (!dark && start >= 0) {
        runs.push({ row, col: start, length: col - start });
        start = -1;
      }
    }
  }
  return { size, runs };
}

export function QrCode({ text, label }: { text: string; label: string }) {
  const code = useMemo(() => qrRuns(text), [text]);
  if (!code) return <p className="banner banner-warn">The text is too long for a QR code; download the file instead.</p>;
  const full = code.size + 2 * QUIET_ZONE;
  return (
    <svg className="qr-code" viewBox={`0 0 ${full} ${full}`} role="img" aria-label={label} shapeRendering="crispEdges" xmlns="http://www.w3.org/2000/svg">
      <rect x={0} y={0} width={full} height={full} fill="#fff" />
      {code.runs.map((run) => (
        <rect key={`${run.row}-${run.col}`} x={run.col + QUIET_ZONE} y={run.row + QUIET_ZONE} width={run.length} height={1} fill="#000" />
      ))}
    </svg>
  );
}
