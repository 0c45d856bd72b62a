// A stand-in "agent binary" for Linux and FreeBSD firmware on this machine: a small sh file that runs
// this checkout's reference agent with its arguments. The demo uploads it as firmware, so the console's
// install commands install a working agent here, and the install tests run them for real with it.
import { fileURLToPath } from 'node:url';
import { shellQuote } from '../modules/install/install-scripts.js';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The launcher's bytes: runs src/agent/main.ts with this Node and tsx, passing every argument on. */
export function referenceAgentLauncher(): Buffer {
  return Buffer.from(
    `#!/bin/sh\n# Runs the reference agent of ${REPO_ROOT} (a stand-in for a real agent binary).\n` +
      `cd ${shellQuote(REPO_ROOT)} && exec ${shellQuote(process.execPath)} --import tsx src/agent/main.ts "$@"\n`,
    'utf8',
  );
}
