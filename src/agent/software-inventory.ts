// The Windows software inventory a heartbeat carries as `software` (spec Agent rule 2, contract §2):
// the programs of the 64-bit and the 32-bit uninstall registry views, as `reg query` prints them,
// without system components and entries without a display name, deduplicated and in alphabetical order.
// On other systems an agent that plays a Windows machine sends a small sample list instead.
import { execFile } from 'node:child_process';

export interface SoftwareEntry {
  name: string;
  version: string;
  publisher: string;
  install_date: string;
}

/** Where Windows lists installed programs; the second key is the 32-bit view on 64-bit Windows. */
export const UNINSTALL_VIEWS = [
  ['query', 'HKLM\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Uninstall', '/s', '/reg:64'],
  ['query', 'HKLM\\SOFTWARE\\WOW6432Node\\Microsoft\\Windows\\CurrentVersion\\Uninstall', '/s'],
] as const;

/** Runs a program without a shell and gives its standard output. */
export type RunProgram = (file: string, args: readonly string[]) => Promise<Buffer>;

/** A key line (`HKEY_LOCAL_MACHINE\...\Uninstall\<program>`) and a value line (`    Name    REG_SZ    value`). */
const PROGRAM_KEY = /^HKEY_[^\\]+\\.*\\Uninstall\\[^\\]+$/i;
const VALUE_LINE = /^ {4}(.+?) {4}(REG_[A-Z0-9_]+)(?: {4}(.*))?$/;

/**
 * The programs in `reg query <Uninstall key> /s` output: one per direct subkey with a DisplayName,
 * unless its SystemComponent is 1. Pure, so it is tested with captured output.
 */
export function parseUninstallRegistry(text: string): SoftwareEntry[] {
  const entries: SoftwareEntry[] = [];
  let values: Map<string, string> | null = null;
  const finish = () => {
    if (!values) return;
    const name = values.get('displayname')?.trim();
    if (name && !isSet(values.get('systemcomponent'))) {
      entries.push({
        name,
        version: values.get('displayversion')?.trim() ?? '',
        publisher: values.get('publisher')?.trim() ?? '',
        install_date: isoDate(values.get('installdate')?.trim() ?? ''),
      });
    }
    values = null;
  };
  for (const rawLine of text.split('\n')) {
    const line = rawLine.replace(/\r$/, '');
    if (line.startsWith('HKEY_')) {
      finish();
      // Only direct subkeys are programs; the key itself and deeper keys are not.
      values = PROGRAM_KEY.test(line.trimEnd()) ? new Map() : null;
      continue;
    }
    const match = VALUE_LINE.exec(line);
    if (values && match) values.set(match[1]!.toLowerCase(), match[3] ?? '');
  }
  finish();
  return entries;
}

/** One entry per name, version and publisher, alphabetical by name (case-insensitive). */
export function mergeInventories(...lists: SoftwareEntry[][]): SoftwareEntry[] {
  const byKey = new Map<string, SoftwareEntry>();
  for (const entry of lists.flat()) {
    const key = JSON.stringify([entry.name, entry.version, entry.publisher]);
    if (!byKey.has(key)) byKey.set(key, entry);
  }
  return [...byKey.values()].sort((a, b) => alphabetical.compare(a.name, b.name) || byCodeUnits(a.name, b.name) || byCodeUnits(a.version, b.version));
}

/**
 * Reads both registry views. A view that cannot be read (no WOW6432Node on 32-bit Windows) counts as
 * empty; when neither can be read this throws, and the heartbeat goes without `software` (the server
 * then keeps the list it has rather than an empty one).
 */
export async function readWindowsSoftware(run: RunProgram = runReg): Promise<SoftwareEntry[]> {
  const views = await Promise.allSettled(UNINSTALL_VIEWS.map((args) => run('reg', args)));
  const read = views.filter((v): v is PromiseFulfilledResult<Buffer> => v.status === 'fulfilled');
  if (read.length === 0) throw new Error(`reg query failed: ${String((views[0] as PromiseRejectedResult).reason)}`);
  return mergeInventories(...read.map((v) => parseUninstallRegistry(decodeConsoleText(v.value))));
}

/** What an agent that plays a Windows machine on another system reports (to try the feature). */
export const SAMPLE_SOFTWARE: readonly SoftwareEntry[] = [
  { name: '7-Zip 24.08 (x64)', version: '24.08', publisher: 'Igor Pavlov', install_date: '2026-01-10' },
  { name: 'Google Chrome', version: '131.0.6778.86', publisher: 'Google LLC', install_date: '2026-02-11' },
  { name: 'Microsoft Edge', version: '131.0.2903.70', publisher: 'Microsoft Corporation', install_date: '2026-03-12' },
  { name: 'Microsoft Visual C++ 2015-2022 Redistributable (x64) - 14.40.33810', version: '14.40.33810.0', publisher: 'Microsoft Corporation', install_date: '2026-01-10' },
  { name: 'Mozilla Firefox (x64 de)', version: '133.0', publisher: 'Mozilla', install_date: '2026-04-13' },
  { name: 'Notepad++ (64-bit x64)', version: '8.7.1', publisher: 'Notepad++ Team', install_date: '2026-05-14' },
  { name: 'VLC media player', version: '3.0.21', publisher: 'VideoLAN', install_date: '2026-06-15' },
];

const alphabetical = new Intl.Collator('en', { sensitivity: 'base' });
const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** REG_DWORD values print as `0x1`. */
function isSet(value: string | undefined): boolean {
  return value !== undefined && Number.parseInt(value, value.trim().toLowerCase().startsWith('0x') ? 16 : 10) === 1;
}

/** The registry's `20240110` as `2024-01-10`; anything else as it is. */
function isoDate(value: string): string {
  const m = /^(\d{4})(\d{2})(\d{2})$/.exec(value);
  return m ? `${m[1]}-${m[2]}-${m[3]}` : value;
}

/**
 * reg.exe writes UTF-8 under a UTF-8 console code page, else the OEM code page, which Node cannot
 * decode; Latin-1 then keeps every ASCII name intact and the rest readable enough.
 */
function decodeConsoleText(bytes: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return bytes.toString('latin1');
  }
}

function runReg(file: string, args: readonly string[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { encoding: 'buffer', windowsHide: true, timeout: 60_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout) =>
      err ? reject(err) : resolve(stdout),
    );
  });
}
