// /agents/{id}/processes and /agents/{id}/services (issue 59): list and act on the device's processes
// and services through its agent. Kills and service actions are audited with the agent, the pid or
// service and the result (the entry's status code); listing is not (a GET).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { callerOf } from '../../http/auth.js';
import { agentParams } from '../agents/agents.schemas.js';
import { killBody, killedSchema, killParams, processListSchema, serviceActionSchema, serviceListSchema, serviceParams } from './device-manage.schemas.js';
import type { DeviceManageService } from './device-manage.service.js';

const tags = ['devices'];
const ACCESS =
  "Outside the caller's customer scope → 404. API keys only while the setting device_api_keys is on (else 403). The agent must announce the capability (else 409 AGENT_UNSUPPORTED) and be connected (else 409 AGENT_NOT_CONNECTED); no answer in time → 504 AGENT_TIMEOUT; the agent's own error → 502 AGENT_ERROR with its text.";

export const deviceManageRoutes: FastifyPluginAsyncZod<{ manage: DeviceManageService }> = async (app, { manage }) => {
  app.get(
    '/agents/:id/processes',
    {
      config: { access: 'read' },
      schema: {
        operationId: 'listDeviceProcesses',
        summary: "The device's processes",
        description: `Read live by the agent (proc_list): pid, parent, user, name, command line, CPU % (per core, over a short sample on Linux), resident memory, start time. Read users may list. Waits at most 30 s. ${ACCESS}`,
        tags,
        params: agentParams,
        response: { 200: processListSchema },
      },
    },
    async (request) => manage.processes(callerOf(request), request.params.id),
  );

  app.post(
    '/agents/:id/processes/:pid/kill',
    {
      config: { access: 'write', audit: 'device.process_kill' },
      schema: {
        operationId: 'killDeviceProcess',
        summary: 'Kill a process on the device',
        description: `Sends the signal (TERM unless given) to the process (proc_kill). The agent refuses PID 1 and itself (502 AGENT_ERROR); a process that does not exist → 404. Needs the write or admin role. Audited. ${ACCESS}`,
        tags,
        params: killParams,
        body: killBody,
        response: { 200: killedSchema },
      },
    },
    async (request) => {
      const { id, pid } = request.params;
      const signal = request.body?.signal ?? 'TERM';
      return manage.kill(callerOf(request), id, pid, signal, (agent) => {
        request.auditTarget = { label: `agent ${agent.name}: kill ${pid} (${signal})`, customerId: agent.customer_id };
      });
    },
  );

  app.get(
    '/agents/:id/services',
    {
      config: { access: 'read' },
      schema: {
        operationId: 'listDeviceServices',
        summary: "The device's services",
        description: `Read live by the agent (svc_list) from the device's service manager: systemd, Debian's init scripts (sysv), FreeBSD's rc.d or Windows' service control manager. Read users may list. Waits at most 30 s. ${ACCESS}`,
        tags,
        params: agentParams,
        response: { 200: serviceListSchema },
      },
    },
    async (request) => manage.services(callerOf(request), request.params.id),
  );

  app.post(
    '/agents/:id/services/:name/:action',
    {
      config: { access: 'write', audit: 'device.service_action' },
      schema: {
        operationId: 'actOnDeviceService',
        summary: 'Start, stop, restart, enable or disable a service on the device',
        description: `Runs the action through the device's service manager (svc_action) and answers with the service as it is afterwards and the tool's output. A failing action is the agent's error (502 AGENT_ERROR with the tool's output); an unknown service → 404. Waits at most 60 s. Needs the write or admin role. Audited. ${ACCESS}`,
        tags,
        params: serviceParams,
        response: { 200: serviceActionSchema },
      },
    },
    async (request) => {
      const { id, name, action } = request.params;
      return manage.serviceAction(callerOf(request), id, name, action, (agent) => {
        request.auditTarget = { label: `agent ${agent.name}: ${action} service ${name}`, customerId: agent.customer_id };
      });
    },
  );
};
