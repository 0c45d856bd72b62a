// The PTY library (node-pty, packaged with prebuilt binaries as @lydell/node-pty) is a native module.
// It is loaded once at start-up, on its own: a missing or broken binary (a copied node_modules, a
// platform without a prebuilt package, `--omit=optional`) turns the web terminal off with one clear
// log line, instead of stopping the whole server at its first import.
import type * as Pty from '@lydell/node-pty';

export type PtyModule = Pick<typeof Pty, 'spawn'>;

export type PtyLoader = () => Promise<PtyModule>;

/** The terminal's PTY, or why there is none (the sentence users read after "terminal unavailable: "). */
export type PtyAvailability = { available: true; pty: PtyModule } | { available: false; reason: string };

export const loadPtyLibrary: PtyLoader = async () => {
  const { spawn } = await import('@lydell/node-pty');
  return { spawn };
};

export async function loadPty(loader: PtyLoader = loadPtyLibrary): Promise<PtyAvailability> {
  try {
    return { available: true, pty: await loader() };
  } catch (err) {
    // The library's own message is several lines of advice; its first line names what is missing.
    const first = (err instanceof Error ? err.message : String(err)).split('\n')[0]!.trim();
    return { available: false, reason: `the PTY module could not be loaded (${first || 'no reason given'})` };
  }
}
