// /customers/{id}/wau/*: a customer's winget-autoupdate rules, the software inventory of its Windows
// agents; the list files winget-autoupdate fetches on the device are in wau-lists.routes.ts.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { idParams } from '../../http/common-schemas.js';
import { allByDefault, listDescription, listResponse, pageQuery, sendList } from '../../http/pagination.js';
import { AppError } from '../../platform/errors.js';
import {
  createRuleBody,
  deletedCountSchema,
  deleteRuleBody,
  deleteRuleSelector,
  inventoryItemSchema,
  ruleSchema,
  toRuleDto,
} from './wau.schemas.js';
import { wauListRoutes } from './wau-lists.routes.js';
import type { InventoryProduct, WauService } from './wau.service.js';

const tags = ['software updates'];
const scopeNote = "A customer outside the caller's customer scope is 404.";

const RULE_LIST = allByDefault('by package id (byte order, as in the list files), then id');
const INVENTORY_LIST = allByDefault('by name ignoring case, then name and publisher (byte order)');

export const wauRoutes: FastifyPluginAsyncZod<{ wau: WauService }> = async (app, { wau }) => {
  app.get(
    '/customers/:id/wau/rules',
    {
      config: { access: 'read' },
      schema: {
        summary: "The customer's software-update rules",
        description: listDescription(RULE_LIST, scopeNote),
        tags,
        params: idParams,
        querystring: z.object(pageQuery(RULE_LIST)),
        response: { 200: listResponse(ruleSchema, RULE_LIST) },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      return sendList(request, reply, RULE_LIST, { item: ruleSchema, dto: toRuleDto, fetch: (page) => wau.listRules(caller, request.params.id, page) });
    },
  );

  app.post(
    '/customers/:id/wau/rules',
    {
      config: { access: 'write', audit: 'wau.rule.create' },
      schema: {
        summary: 'Allow or block automatic updates of a package for the customer',
        description: `A package id the customer already has a rule for (ignoring case) → 409; an invalid package id → 400. ${scopeNote}`,
        tags,
        params: idParams,
        body: createRuleBody,
        response: { 201: ruleSchema },
      },
    },
    async (request, reply) => reply.code(201).send(toRuleDto(await wau.createRule(callerOf(request), request.params.id, request.body))),
  );

  app.delete(
    '/customers/:id/wau/rules',
    {
      config: { access: 'write', audit: 'wau.rule.delete' },
      schema: {
        summary: 'Delete a rule by id or by package id',
        description:
          '`id` and/or `package_id` in the JSON body or in the query (neither → 400); with both, the rule must match both. ' +
          `Answers how many rules were deleted (0 when none matched). ${scopeNote}`,
        tags,
        params: idParams,
        querystring: deleteRuleSelector,
        body: deleteRuleBody,
        response: { 200: deletedCountSchema },
      },
    },
    async (request) => {
      const fromBody = request.body ?? {};
      const fromQuery = request.query;
      const match = {
        id: agreeing('id', fromBody.id, fromQuery.id),
        packageId: agreeing('package_id', fromBody.package_id, fromQuery.package_id),
      };
      const deleted = await wau.deleteRules(callerOf(request), request.params.id, {
        ...(match.id !== undefined ? { id: match.id } : {}),
        ...(match.packageId !== undefined ? { packageId: match.packageId } : {}),
      });
      return { deleted };
    },
  );

  app.get(
    '/customers/:id/wau/inventory',
    {
      config: { access: 'read' },
      schema: {
        summary: "Software on the customer's Windows agents, with agent counts per version",
        description: listDescription(
          INVENTORY_LIST,
          "From the latest `software` list each of the customer's Windows agents sent with a heartbeat (system components never appear). " +
            `One entry per name and publisher. ${scopeNote}`,
        ),
        tags,
        params: idParams,
        querystring: z.object(pageQuery(INVENTORY_LIST)),
        response: { 200: listResponse(inventoryItemSchema, INVENTORY_LIST) },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      return sendList(request, reply, INVENTORY_LIST, { item: inventoryItemSchema, dto: (p: InventoryProduct) => p, fetch: (page) => wau.inventory(caller, request.params.id, page) });
    },
  );

  await app.register(wauListRoutes, { wau });
};

/** The value given in the body or the query; both given and different → 400. */
function agreeing<T>(field: string, fromBody: T | undefined, fromQuery: T | undefined): T | undefined {
  if (fromBody !== undefined && fromQuery !== undefined && fromBody !== fromQuery) {
    throw new AppError('VALIDATION_ERROR', `${field} differs between the body and the query`);
  }
  return fromBody ?? fromQuery;
}

