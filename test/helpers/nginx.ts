// A real nginx (Debian's package) in front of a test server, with the deployment guide's configuration
// (deploy/nginx/rmm.conf, the same file docs/deploy.md prints) and a self-signed certificate made here.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './free-port.js';
import { selfSignedCertificate } from './self-signed.js';

export const NGINX = '/usr/sbin/nginx';
export const NGINX_SITE = path.resolve(import.meta.dirname, '../../deploy/nginx/rmm.conf');

export interface RunningNginx {
  port: number;
  /** The certificate (PEM) clients must trust. */
  ca: Buffer;
  caFile: string;
  stop(): Promise<void>;
}

/** Starts nginx on a free port, proxying to 127.0.0.1:`upstreamPort` with TLS for 127.0.0.1 and localhost. */
export async function startNginx(upstreamPort: number): Promise<RunningNginx> {
  const { dir, cert, key } = await selfSignedCertificate('rmm-nginx-');
  const port = await freePort();
  const site = (await readFile(NGINX_SITE, 'utf8'))
    .replaceAll('{{UPSTREAM}}', `127.0.0.1:${upstreamPort}`)
    .replaceAll('{{LISTEN}}', `127.0.0.1:${port}`)
    .replaceAll('{{SERVER_NAME}}', 'localhost')
    .replaceAll('{{CERTIFICATE}}', cert)
    .replaceAll('{{CERTIFICATE_KEY}}', key);
  if (/\{\{[A-Z_]+\}\}/.test(site)) throw new Error('a placeholder of deploy/nginx/rmm.conf was left unfilled');
  await writeFile(path.join(dir, 'rmm.conf'), site);
  // What /etc/nginx/nginx.conf gives the site on a real host, kept in the test's folder.
  await writeFile(
    path.join(dir, 'nginx.conf'),
    [
      'daemon off;',
      'worker_processes 1;',
      `pid ${dir}/nginx.pid;`,
      `error_log ${dir}/error.log warn;`,
      'events { worker_connections 256; }',
      'http {',
      '  access_log off;',
      `  client_body_temp_path ${dir}/body;`,
      `  proxy_temp_path ${dir}/proxy;`,
      `  fastcgi_temp_path ${dir}/fastcgi;`,
      `  uwsgi_temp_path ${dir}/uwsgi;`,
      `  scgi_temp_path ${dir}/scgi;`,
      `  include ${dir}/rmm.conf;`,
      '}',
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(NGINX, ['-p', dir, '-c', path.join(dir, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGQUIT');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) {
      const log = await readFile(path.join(dir, 'error.log'), 'utf8').catch(() => '');
      await stop();
      throw new Error(`nginx exited: ${stderr}${log}`);
    }
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => (socket.destroy(), resolve(true)));
      socket.on('error', () => resolve(false));
    });
    if (up) return { port, ca: await readFile(cert), caFile: cert, stop };
    await sleep(100);
  }
  await stop();
  throw new Error('nginx did not listen within 10 s');
}
