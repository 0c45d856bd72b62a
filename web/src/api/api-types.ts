// The console's names for the API's shapes, read from the types generated from the server's OpenAPI
// document (openapi.gen.ts, scripts/openapi-types.ts). Pages say which operation they call, as the API
// spells it without the /api/v1 prefix: `ApiBody<'/agents/{id}'>` is what GET /agents/{id} answers, so a
// field renamed on the server fails the console's type check where a page reads it.
import type { paths } from './openapi.gen';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** Every path of the API, as the console writes it (after API in client.ts). */
export type ApiPath = keyof paths extends infer K ? (K extends `/api/v1${infer P}` ? P : never) : never;

/** The methods the API has for a path (the generated type lists the others as optional `never`). */
export type ApiMethod<P extends ApiPath> = { [M in Method]: NonNullable<paths[`/api/v1${P}`][M]> extends never ? never : M }[Method];

type Operation<P extends ApiPath, M extends ApiMethod<P>> = NonNullable<paths[`/api/v1${P}`][M]>;

type JsonContent<R> = R extends { content: { 'application/json': infer Body } } ? Body : undefined;

type SuccessStatus = 200 | 201 | 202 | 204;

/** What the operation answers on success (undefined for 204 No Content). */
export type ApiBody<P extends ApiPath, M extends ApiMethod<P> = ApiMethod<P> & 'get'> = JsonContent<
  Operation<P, M>['responses'][SuccessStatus & keyof Operation<P, M>['responses']]
>;

/** One item of a list the operation answers. */
export type ApiItem<P extends ApiPath, M extends ApiMethod<P> = ApiMethod<P> & 'get'> = ApiBody<P, M> extends readonly (infer Item)[] ? Item : never;

/** The JSON body the operation takes. */
export type ApiRequest<P extends ApiPath, M extends ApiMethod<P>> = Operation<P, M> extends { requestBody?: { content: { 'application/json': infer Body } } } ? Body : never;

/** The query parameters the operation takes. */
export type ApiQuery<P extends ApiPath, M extends ApiMethod<P> = ApiMethod<P> & 'get'> = NonNullable<Operation<P, M>['parameters']['query']>;

/**
 * A list of every value of a union the API defines, checked: `allOf<AgentStatus>()(['online', …])`
 * fails the type check when a value is missing (the server added one) or unknown (it dropped one).
 */
export function allOf<T extends string>() {
  return <const L extends readonly T[]>(list: L & (Exclude<T, L[number]> extends never ? unknown : { missing: Exclude<T, L[number]> })): L => list;
}
