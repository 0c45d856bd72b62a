// Entry names of installer packages, judged as the Windows machines that extract them would read them.
// Names are compared after Unicode compatibility normalisation (NFKC), because Windows tools that pass
// names through an ANSI code page ("best fit" conversion) turn fullwidth `．．／` into `../`, and a few
// other look-alikes into separators (NFKC does not map ∕ or ¥, so those are refused outright). Windows
// also drops trailing dots and spaces and reserves device names in every folder and with any extension
// (`nul.txt` is NUL), so such names would be written somewhere else than they say, or not at all.
import yauzl from 'yauzl';

export interface NameProblem {
  /** True when the name could place a file outside the folder it is extracted into (zip-slip). */
  escapes: boolean;
  reason: string;
}

// ∕ ⁄ ∖ ⧵ ⧸ ⧹ ﹨ ／ ＼, and ¥ ₩ (the backslash of Japanese and Korean code pages).
const SEPARATOR_LOOK_ALIKES = /[\u2044\u2215\u2216\u29f5\u29f8\u29f9\ufe68\uff0f\uff3c\u00a5\u20a9]/;
const RESERVED_DEVICE = /^(con|prn|aux|nul|com[0-9]|lpt[0-9]|conin\$|conout\$)$/i;
const NOT_IN_WINDOWS_NAMES = /[<>"|?*]/;

const escapes = (reason: string): NameProblem => ({ escapes: true, reason });
const windowsOnly = (reason: string): NameProblem => ({ escapes: false, reason });

/** What is wrong with an entry name (decoded, `/`-separated, folders ending with `/`), or undefined. */
export function nameProblem(raw: string): NameProblem | undefined {
  if (raw === '') return escapes('an empty name');
  if (SEPARATOR_LOOK_ALIKES.test(raw)) {
    return escapes('a character that looks like a slash or backslash, which Windows code page conversion can turn into one');
  }
  const name = raw.normalize('NFKC');
  if (name.includes('\\')) return escapes('a backslash, which Windows reads as a folder separator');
  if (name.startsWith('/') || /^[a-z]:/i.test(name)) return escapes('an absolute path');
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (/[\u0000-\u001f:]/.test(name)) return escapes('a colon or a control character');
  const segments = name.replace(/\/$/, '').split('/');
  if (segments.some((segment) => /^[. ]+$/.test(segment))) return escapes('a segment made only of dots and spaces, such as ..');
  // yauzl's own rule as the last word on escaping, should it ever learn more than the rules above.
  const yauzlReason = yauzl.validateFileName(name);
  if (yauzlReason) return escapes(yauzlReason);

  if (segments.some((segment) => RESERVED_DEVICE.test(segment.split('.')[0]!.trimEnd()))) {
    return windowsOnly('a reserved Windows device name (CON, PRN, AUX, NUL, COM0-9, LPT0-9, CONIN$, CONOUT$), with or without an extension');
  }
  if (segments.some((segment) => /[. ]$/.test(segment))) return windowsOnly('a name that ends with a dot or a space, which Windows drops');
  if (NOT_IN_WINDOWS_NAMES.test(name)) return windowsOnly('a character that is not allowed in Windows file names (< > " | ? *)');
  return undefined;
}

/**
 * The name as Windows compares names: normalised, without a folder's trailing slash, ignoring case. Two
 * entries with one key would overwrite each other.
 */
export function nameKey(name: string): string {
  return name.normalize('NFKC').replace(/\/$/, '').toLowerCase();
}
