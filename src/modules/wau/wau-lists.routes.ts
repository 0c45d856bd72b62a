// The list files winget-autoupdate (WAU) downloads on a customer's PCs (contract §3): `/wau/included` and
// `/wau/excluded` as the contract names them, and the same lists under WAU's own file names. WAU builds
// its URL from the configured ListPath: with `?` in it, it puts `/included_apps.txt` before the query
// (Test-ListPath.ps1), so ListPath `https://<server>/api/v1/customers/<id>/wau?api_key=<agent key>`
// makes WAU request `…/customers/<id>/wau/included_apps.txt?api_key=<agent key>`. It sends no headers:
// the key comes in the query, as the auth plugin already accepts.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { WauAction } from '../../db/schema.js';
import { callerOf } from '../../http/auth.js';
import { idParams } from '../../http/common-schemas.js';
import { parseHttpDate } from './list-validators.js';
import type { WauService } from './wau.service.js';

const tags = ['software updates'];

const LISTS: ReadonlyArray<{ path: string; action: WauAction; wauFile?: true }> = [
  { path: 'included', action: 'allow' },
  { path: 'excluded', action: 'block' },
  { path: 'included_apps.txt', action: 'allow', wauFile: true },
  { path: 'excluded_apps.txt', action: 'block', wauFile: true },
];

const VALIDATORS =
  '`Last-Modified` is the whole second after the latest rule change of the customer (creation or deletion, in either list; else its ' +
  'creation): the same in every answer until the next change. Asked for within that change\'s second, the answer waits until the ' +
  'second is over (at most 1 s), so Last-Modified is never after `Date`. `ETag` is a hash of the body. `If-None-Match` ' +
  'matching the ETag, or else `If-Modified-Since` at or after Last-Modified, → 304 without a body.';

const LIST_PATH_NOTE =
  "winget-autoupdate's own file name, for its `ListPath`: configure `https://<server>/api/v1/customers/{id}/wau?api_key=<agent key of the customer>`; " +
  'WAU inserts the file name before the query and requests this path with the key in `api_key`. ';

export const wauListRoutes: FastifyPluginAsyncZod<{ wau: WauService }> = async (app, { wau }) => {
  for (const { path, action, wauFile } of LISTS) {
    const file = action === 'allow' ? 'included_apps.txt' : 'excluded_apps.txt';
    app.get(
      `/customers/:id/wau/${path}`,
      {
        config: { access: 'agent' },
        schema: {
          summary: wauFile ? `The ${action} rules at winget-autoupdate's own URL (${file})` : `The ${action} rules as winget-autoupdate's ${file}`,
          description:
            (wauFile ? LIST_PATH_NOTE : '') +
            'For the on-device updater (agent keys may read it). text/plain: one package id per line, in byte order, unique, no comments, ' +
            `final newline; no rules → empty body. ${VALIDATORS} A customer outside the caller's customer scope is 404.`,
          tags,
          params: idParams,
          response: {
            200: { description: `The ${file} list`, content: { 'text/plain': { schema: z.string() } } },
            304: { description: 'Not modified: no body', content: { 'text/plain': { schema: z.literal('') } } },
          },
        },
      },
      async (request, reply) => {
        const list = await wau.packageList(callerOf(request), request.params.id, action, {
          ifModifiedSince: parseHttpDate(request.headers['if-modified-since']),
          ifNoneMatch: request.headers['if-none-match'],
        });
        reply
          // Date from the same clock reading as Last-Modified, so the two can be compared as RFC 9110 requires
          // (Node's own Date is cached per second and could lag behind it).
          .header('date', list.date.toUTCString())
          .header('last-modified', list.lastModified.toUTCString())
          .header('etag', list.etag)
          .header('cache-control', 'no-cache');
        if (list.body === null) return reply.code(304).send();
        return reply.type('text/plain; charset=utf-8').send(list.body);
      },
    );
  }
};
