// The registry parser against `reg query ... /s` output as Windows prints it (CRLF, four-space
// separators, REG_DWORD as hex, empty values, the key itself and nested keys), and the merge of the
// 64-bit and 32-bit views. No Windows here: the output is a captured sample.
import { describe, expect, it } from 'vitest';
import { mergeInventories, parseUninstallRegistry, readWindowsSoftware, UNINSTALL_VIEWS } from './software-inventory.js';

const crlf = (lines: string[]) => lines.join('\r\n') + '\r\n';

const VIEW_64 = crlf([
  '',
  'HKEY_LOCAL_MACHINE\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Uninstall',
  '',
  'HKEY_LOCAL_MACHINE\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Uninstall\\7-Zip',
  '    DisplayName    REG_SZ    7-Zip 24.08 (x64)',
  '    DisplayVersion    REG_SZ    24.08',
  '    DisplayIcon    REG_SZ    C:\\Program Files\\7-Zip\\7zFM.exe',
  '    UninstallString    REG_SZ    "C:\\Program Files\\7-Zip\\Uninstall.exe"',
  '    NoModify    REG_DWORD    0x1',
  '    EstimatedSize    REG_DWORD    0x1628',
  '    Publisher    REG_SZ    Igor Pavlov',
  '',
  'HKEY_LOCAL_MACHINE\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Uninstall\\{0D8D9F2C-1A5B-4E57-9C65-3B9A2E3B6F11}',
  '    AuthorizedCDFPrefix    REG_SZ    ',
  '    Comments    REG_SZ',
  '    DisplayName    REG_SZ    Microsoft Update Health Tools',
  '    DisplayVersion    REG_SZ    5.72.0.0',
  '    InstallDate    REG_SZ    20240110',
  '    Publisher    REG_SZ    Microsoft Corporation',
  '    SystemComponent    REG_DWORD    0x1',
  '',
  'HKEY_LOCAL_MACHINE\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Uninstall\\{5FCE6D76-F5DC-37AB-B2B8-22AB8CEDB1D4}',
  '    DisplayName    REG_SZ    Microsoft Visual C++ 2015-2022 Redistributable (x64) - 14.40.33810',
  '    DisplayVersion    REG_SZ    14.40.33810.0',
  '    InstallDate    REG_SZ    20250302',
  '    Publisher    REG_SZ    Microsoft Corporation',
  '    SystemComponent    REG_DWORD    0x0',
  '',
  'HKEY_LOCAL_MACHINE\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Uninstall\\AddressBook',
  '    (Default)    REG_SZ    ',
  '',
  'HKEY_LOCAL_MACHINE\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Uninstall\\Mozilla Firefox 133.0 (x64 de)',
  '    Comments    REG_SZ    Mozilla Firefox 133.0 (x64 de)',
  '    DisplayName    REG_SZ    Mozilla Firefox (x64 de)',
  '    DisplayVersion    REG_SZ    133.0',
  '    Publisher    REG_SZ    Mozilla',
  '',
  'HKEY_LOCAL_MACHINE\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Uninstall\\Mozilla Firefox 133.0 (x64 de)\\Extras',
  '    DisplayName    REG_SZ    Not a program of its own',
  '',
  'HKEY_LOCAL_MACHINE\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Uninstall\\notepad++',
  '    DisplayName    REG_SZ    Notepad++ (64-bit x64)',
  '    DisplayVersion    REG_SZ    8.7.1',
  '    Publisher    REG_SZ    Notepad++ Team',
]);

const VIEW_32 = crlf([
  '',
  'HKEY_LOCAL_MACHINE\\SOFTWARE\\WOW6432Node\\Microsoft\\Windows\\CurrentVersion\\Uninstall\\{AC76BA86-7AD7-1033-7B44-AC0F074E4100}',
  '    DisplayName    REG_SZ    Adobe Acrobat Reader',
  '    DisplayVersion    REG_SZ    24.005.20320',
  '    InstallDate    REG_SZ    20250115',
  '    Publisher    REG_SZ    Adobe',
  '',
  'HKEY_LOCAL_MACHINE\\SOFTWARE\\WOW6432Node\\Microsoft\\Windows\\CurrentVersion\\Uninstall\\7-Zip',
  '    DisplayName    REG_SZ    7-Zip 24.08 (x64)',
  '    DisplayVersion    REG_SZ    24.08',
  '    Publisher    REG_SZ    Igor Pavlov',
  '',
  'HKEY_LOCAL_MACHINE\\SOFTWARE\\WOW6432Node\\Microsoft\\Windows\\CurrentVersion\\Uninstall\\{F3C6A2D1-0000-0000-0000-000000000000}',
  '    DisplayVersion    REG_SZ    1.0',
  '    Publisher    REG_SZ    Nobody',
  '',
  'HKEY_LOCAL_MACHINE\\SOFTWARE\\WOW6432Node\\Microsoft\\Windows\\CurrentVersion\\Uninstall\\Google Chrome',
  '    DisplayName    REG_SZ    Google Chrome',
  '    DisplayVersion    REG_SZ    131.0.6778.86',
  '    InstallDate    REG_SZ    20251201',
  '    Publisher    REG_SZ    Google LLC',
]);

describe('parseUninstallRegistry', () => {
  it('reads every program of a view with its version, publisher and install date, skipping system components', () => {
    expect(parseUninstallRegistry(VIEW_64)).toEqual([
      { name: '7-Zip 24.08 (x64)', version: '24.08', publisher: 'Igor Pavlov', install_date: '' },
      {
        name: 'Microsoft Visual C++ 2015-2022 Redistributable (x64) - 14.40.33810',
        version: '14.40.33810.0',
        publisher: 'Microsoft Corporation',
        install_date: '2025-03-02',
      },
      { name: 'Mozilla Firefox (x64 de)', version: '133.0', publisher: 'Mozilla', install_date: '' },
      { name: 'Notepad++ (64-bit x64)', version: '8.7.1', publisher: 'Notepad++ Team', install_date: '' },
    ]);
  });

  it('skips keys without a DisplayName and reads LF-only text the same', () => {
    const names = parseUninstallRegistry(VIEW_32.replace(/\r\n/g, '\n')).map((e) => e.name);
    expect(names).toEqual(['Adobe Acrobat Reader', '7-Zip 24.08 (x64)', 'Google Chrome']);
    expect(parseUninstallRegistry('')).toEqual([]);
  });
});

describe('the inventory of both views', () => {
  const views = new Map<string, string>([
    [UNINSTALL_VIEWS[0][1], VIEW_64],
    [UNINSTALL_VIEWS[1][1], VIEW_32],
  ]);

  it('runs reg query for both views without a shell, then merges: one entry per program, alphabetical', async () => {
    const calls: Array<[string, readonly string[]]> = [];
    const software = await readWindowsSoftware(async (file, args) => {
      calls.push([file, args]);
      return Buffer.from(views.get(args[1]!)!, 'utf8');
    });
    expect(calls).toEqual([
      ['reg', ['query', 'HKLM\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Uninstall', '/s', '/reg:64']],
      ['reg', ['query', 'HKLM\\SOFTWARE\\WOW6432Node\\Microsoft\\Windows\\CurrentVersion\\Uninstall', '/s']],
    ]);
    expect(software.map((e) => e.name)).toEqual([
      '7-Zip 24.08 (x64)',
      'Adobe Acrobat Reader',
      'Google Chrome',
      'Microsoft Visual C++ 2015-2022 Redistributable (x64) - 14.40.33810',
      'Mozilla Firefox (x64 de)',
      'Notepad++ (64-bit x64)',
    ]);
    expect(software[1]).toEqual({ name: 'Adobe Acrobat Reader', version: '24.005.20320', publisher: 'Adobe', install_date: '2025-01-15' });
  });

  it('reads the one view there is (32-bit Windows has no WOW6432Node) and fails only when neither can be read', async () => {
    const only64 = await readWindowsSoftware(async (_file, args) => {
      if (args[1]!.includes('WOW6432Node')) throw new Error('ERROR: The system was unable to find the specified registry key or value.');
      return Buffer.from(VIEW_64, 'utf8');
    });
    expect(only64).toHaveLength(4);
    await expect(readWindowsSoftware(async () => Promise.reject(new Error('reg not found')))).rejects.toThrow('reg query failed');
  });

  it('sorts case-insensitively and keeps different versions of one program apart', () => {
    const entry = (name: string, version = '1') => ({ name, version, publisher: 'P', install_date: '' });
    const merged = mergeInventories([entry('PuTTY'), entry('paint.net'), entry('PDF24 Creator')], [entry('PuTTY'), entry('PuTTY', '2')]);
    expect(merged.map((e) => `${e.name} ${e.version}`)).toEqual(['paint.net 1', 'PDF24 Creator 1', 'PuTTY 1', 'PuTTY 2']);
  });
});
