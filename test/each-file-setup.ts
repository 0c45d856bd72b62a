// Run by vitest before each test file (setupFiles), so this hook is registered for every file, first:
// after-all hooks run in reverse order, so it runs after the file's own (its apps and servers closed).
import { afterAll } from 'vitest';
import { runFileCleaners } from './helpers/file-cleanup.js';

afterAll(runFileCleaners);

// Shells the tests open (the device shell's default is $SHELL) start as /bin/sh. An interactive bash
// reads the machine's ~/.bashrc, and this machine's runs `pyenv rehash`, which waits up to 60 s on a
// lock file that a shell closed mid-rehash leaves behind: then every test shell hung for a minute
// (seen 2026-11-29). What a user's login files do is theirs; the tests are about the shell's path.
process.env.SHELL = '/bin/sh';
