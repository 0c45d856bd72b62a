// The device-session API's shapes (issue 59) as the console reads them, named from the generated types:
// files, processes, services and the sessions of an agent.
import type { ApiBody, ApiItem, ApiRequest } from '../../api/api-types';
import type { operations } from '../../api/openapi.gen';
import type { AgentDetail } from '../../api/types';

export type DeviceCapability = AgentDetail['capabilities'][number];

export type FileListing = ApiBody<'/agents/{id}/files'>;
export type FileEntry = FileListing['entries'][number];
export type UploadAnswer = ApiBody<'/agents/{id}/files/content', 'put'>;

export type DeviceProcess = ApiBody<'/agents/{id}/processes'>['processes'][number];
export type KillSignal = NonNullable<NonNullable<ApiRequest<'/agents/{id}/processes/{pid}/kill', 'post'>>['signal']>;

export type ServiceList = ApiBody<'/agents/{id}/services'>;
export type DeviceService = ServiceList['services'][number];
export type ServiceAction = operations['actOnDeviceService']['parameters']['path']['action'];
export type ServiceActionAnswer = ApiBody<'/agents/{id}/services/{name}/{action}', 'post'>;

export type DeviceSession = ApiItem<'/device-sessions'>;

/** `/agents/{id}` plus `rest`, the agent's id escaped. */
export function agentPath(agentId: string, rest: string): string {
  return `/agents/${encodeURIComponent(agentId)}${rest}`;
}
