// /agents/{id}/vpn/peers: WireGuard peers on the agent's firewall, created, listed and deleted through
// the agent. Only the creation response carries the client configuration (with its private key); the
// audit log records the request line only, never bodies or responses.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { agentParams } from '../agents/agents.schemas.js';
import { createdPeerSchema, createPeerBody, deletedSchema, listPeersQuery, peerParams, peerSchema } from './vpn.schemas.js';
import type { VpnService } from './vpn.service.js';

const tags = ['vpn'];
const agentNote =
  "Sent to the agent over its WebSocket (waits at most 60 s). Not connected → 409 AGENT_NOT_CONNECTED; no answer → 504 AGENT_TIMEOUT; an agent error or a malformed answer → 502 AGENT_ERROR. An agent outside the caller's customer scope is 404.";

export const vpnRoutes: FastifyPluginAsyncZod<{ vpn: VpnService }> = async (app, { vpn }) => {
  app.post(
    '/agents/:id/vpn/peers',
    {
      config: { access: 'write', audit: 'vpn_peer.create' },
      schema: {
        summary: 'Create a WireGuard peer on the firewall',
        description: `The firewall generates the key pair, assigns the next free tunnel address, attaches the peer to the server instance and reloads its VPN service. The response holds the client configuration with the private key: the server keeps no copy. ${agentNote}`,
        tags,
        params: agentParams,
        body: createPeerBody,
        response: { 201: createdPeerSchema },
      },
    },
    async (request, reply) => reply.code(201).send(await vpn.create(callerOf(request), request.params.id, request.body)),
  );

  app.get(
    '/agents/:id/vpn/peers',
    {
      config: { access: 'read' },
      schema: {
        summary: "The firewall's WireGuard peers (without client configurations)",
        description: `${agentNote} Not paged: the list is the agent's own answer to \`vpn_peer_list\`, read live from the firewall on each request (a firewall holds tens of peers, not thousands), so the server has no position to resume from.`,
        tags,
        params: agentParams,
        querystring: listPeersQuery,
        response: { 200: z.array(peerSchema) },
      },
    },
    async (request) => vpn.list(callerOf(request), request.params.id, request.query.server_name),
  );

  app.delete(
    '/agents/:id/vpn/peers/:uuid',
    {
      config: { access: 'write', audit: 'vpn_peer.delete' },
      schema: {
        summary: 'Delete a WireGuard peer on the firewall',
        description: `An unknown uuid is the agent's error (502 AGENT_ERROR with its text). ${agentNote}`,
        tags,
        params: peerParams,
        response: { 200: deletedSchema },
      },
    },
    async (request) => {
      await vpn.delete(callerOf(request), request.params.id, request.params.uuid);
      return { deleted: true as const };
    },
  );
};
