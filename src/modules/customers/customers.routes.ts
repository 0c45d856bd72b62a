// /customers: the MSP's clients. Customer-scoped keys see and change only their own customer.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { callerOf } from '../../http/auth.js';
import { idParams, okSchema } from '../../http/common-schemas.js';
import { listDescription, listResponse, sendList } from '../../http/pagination.js';
import { API_KEY_LIST, apiKeyListQuery, apiKeySchema, toApiKeyDto } from '../api-keys/api-keys.schemas.js';
import type { ApiKeyService } from '../api-keys/api-keys.service.js';
import { CUSTOMER_LIST, createCustomerBody, customerListQuery, customerSchema, toCustomerDto, updateCustomerBody } from './customers.schemas.js';
import type { CustomerService } from './customers.service.js';

const tags = ['customers'];

export const customerRoutes: FastifyPluginAsyncZod<{ customers: CustomerService; apiKeys: ApiKeyService }> = async (
  app,
  { customers, apiKeys },
) => {
  app.get(
    '/customers',
    {
      config: { access: 'read' },
      schema: { summary: 'List customers', description: listDescription(CUSTOMER_LIST), tags, querystring: customerListQuery, response: { 200: listResponse(customerSchema, CUSTOMER_LIST) } },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      return sendList(request, reply, CUSTOMER_LIST, { item: customerSchema, dto: toCustomerDto, fetch: (page) => customers.list(caller, page) });
    },
  );

  app.post(
    '/customers',
    {
      config: { access: 'write', audit: 'customer.create', serverWide: true },
      schema: {
        summary: 'Create a customer (no API key is created)',
        description: 'The number must be unique (409). Customer-scoped keys cannot create customers (403).',
        tags,
        body: createCustomerBody,
        response: { 201: customerSchema },
      },
    },
    async (request, reply) => reply.code(201).send(toCustomerDto(await customers.create(callerOf(request), request.body))),
  );

  app.get(
    '/customers/:id',
    { config: { access: 'read' }, schema: { summary: 'One customer', tags, params: idParams, response: { 200: customerSchema } } },
    async (request) => toCustomerDto(await customers.get(callerOf(request), request.params.id)),
  );

  app.put(
    '/customers/:id',
    {
      config: { access: 'write', audit: 'customer.update' },
      schema: { summary: 'Change number and/or name', tags, params: idParams, body: updateCustomerBody, response: { 200: customerSchema } },
    },
    async (request) => toCustomerDto(await customers.update(callerOf(request), request.params.id, request.body)),
  );

  app.delete(
    '/customers/:id',
    {
      config: { access: 'write', audit: 'customer.delete' },
      schema: {
        summary: 'Delete a customer: its API keys are deleted, its agents become unassigned',
        tags,
        params: idParams,
        response: { 200: okSchema },
      },
    },
    async (request) => {
      await customers.delete(callerOf(request), request.params.id);
      return { ok: true as const };
    },
  );

  app.get(
    '/customers/:id/apikeys',
    {
      config: { access: 'read' },
      schema: {
        summary: 'API keys scoped to this customer (masked)',
        description: listDescription(API_KEY_LIST),
        tags,
        params: idParams,
        querystring: apiKeyListQuery,
        response: { 200: listResponse(apiKeySchema, API_KEY_LIST) },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      return sendList(request, reply, API_KEY_LIST, { item: apiKeySchema, dto: toApiKeyDto, fetch: (page) => apiKeys.listOfCustomer(caller, request.params.id, page) });
    },
  );
};
