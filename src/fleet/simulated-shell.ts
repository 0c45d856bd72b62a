// A tiny shell for the fleet's simulated devices (issue 59), so a demo's Shell tab has something to
// talk to without a process on the simulator's machine: a line editor that echoes what is typed, and
// a handful of commands (echo with $((a op b)) arithmetic, hostname, uname, whoami, pwd, date, uptime,
// `stty size`, help, exit). Anything else is "command not found".
import type { Platform } from '../agent/device-state.js';
import { CommandError, type CommandTable } from '../agent/commands/types.js';
import type { StreamHandler, StreamPort } from '../agent/device-streams.js';

const UNAME: Record<Platform, string> = { freebsd: 'FreeBSD', linux: 'Linux', windows: 'Windows_NT' };
const USER: Record<Platform, string> = { freebsd: 'root', linux: 'root', windows: 'nt authority\\system' };

/** `$((6*7))` and the like: two integers and one operator, nothing else is evaluated. */
export function expandArithmetic(text: string): string {
  return text.replace(/\$\(\(\s*(-?\d+)\s*([-+*/%])\s*(-?\d+)\s*\)\)/g, (_all, a: string, op: string, b: string) => {
    const x = BigInt(a);
    const y = BigInt(b);
    if ((op === '/' || op === '%') && y === 0n) return 'division by 0';
    return String(op === '+' ? x + y : op === '-' ? x - y : op === '*' ? x * y : op === '/' ? x / y : x % y);
  });
}

export class SimulatedShell implements StreamHandler {
  private line = '';
  private readonly startedAt = Date.now();

  constructor(
    private readonly port: StreamPort,
    private readonly platform: Platform,
    private readonly hostname: string,
    public cols: number,
    public rows: number,
  ) {}

  private get prompt(): string {
    return this.platform === 'windows' ? 'PS C:\\Windows\\system32> ' : `root@${this.hostname}:~# `;
  }

  start(): void {
    this.write(`Simulated device ${this.hostname} (a demo: nothing here runs on a real machine). Type help.\r\n${this.prompt}`);
  }

  data(payload: Buffer): void {
    for (const ch of payload.toString('utf8')) {
      if (ch === '\r' || ch === '\n') {
        const line = this.line.trim();
        this.line = '';
        this.write('\r\n');
        if (line === 'exit' || line === 'logout') return this.port.close({ exit_code: 0 });
        const out = this.run(line);
        this.write(out ? `${out.replace(/\n/g, '\r\n')}\r\n${this.prompt}` : this.prompt);
      } else if (ch === '\x7f' || ch === '\b') {
        if (this.line.length > 0) {
          this.line = this.line.slice(0, -1);
          this.write('\b \b');
        }
      } else if (ch === '\x03') {
        this.line = '';
        this.write(`^C\r\n${this.prompt}`);
      } else if (ch === '\x04' && this.line === '') {
        return this.port.close({ exit_code: 0 });
      } else if (ch >= ' ' && this.line.length < 4096) {
        this.line += ch;
        this.write(ch);
      }
    }
  }

  private run(line: string): string {
    if (line === '') return '';
    const [command = '', ...args] = line.split(/\s+/);
    switch (command) {
      case 'echo':
        return expandArithmetic(line.slice(4).trim()).replace(/^(['"])(.*)\1$/, '$2');
      case 'hostname':
        return this.hostname;
      case 'uname':
        return args.includes('-a') ? `${UNAME[this.platform]} ${this.hostname} (simulated)` : UNAME[this.platform];
      case 'whoami':
        return USER[this.platform];
      case 'pwd':
        return this.platform === 'windows' ? 'C:\\Windows\\system32' : '/root';
      case 'date':
        return new Date().toUTCString();
      case 'uptime':
        return `up ${Math.floor((Date.now() - this.startedAt) / 1000)} s (this shell)`;
      case 'stty':
        return args[0] === 'size' ? `${this.rows} ${this.cols}` : '';
      case 'help':
        return 'echo, hostname, uname [-a], whoami, pwd, date, uptime, stty size, exit';
      default:
        return `${command}: command not found`;
    }
  }

  private write(text: string): void {
    this.port.send(Buffer.from(text));
  }

  pause(): void {}
  resume(): void {}
  destroy(): void {}
}

export function simulatedShellHandlers(platform: Platform, hostname: string): Partial<CommandTable> {
  return {
    pty_open: async ({ session_id, cols, rows }, ctx) => {
      if (!ctx.streams) throw new CommandError('a shell is not available on this connection');
      let shell: SimulatedShell | null = null;
      await ctx.streams.open(session_id, async (port) => (shell = new SimulatedShell(port, platform, hostname, cols, rows)));
      // After the answer: no frame may precede it.
      setImmediate(() => shell?.start());
      return { pid: null, shell: 'simulated' };
    },
    pty_resize: async ({ session_id, cols, rows }, ctx) => {
      const shell = ctx.streams?.handler<SimulatedShell>(session_id);
      if (!shell) throw new CommandError(`no shell session ${session_id}`);
      shell.cols = cols;
      shell.rows = rows;
      return {};
    },
    pty_close: async ({ session_id }, ctx) => {
      ctx.streams?.end(session_id);
      return {};
    },
  };
}
