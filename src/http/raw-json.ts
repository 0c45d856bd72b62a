// Sending JSON that is already text (stored heartbeats): Fastify passes a string payload with a JSON
// content type through untouched, so nothing is parsed and re-serialised. The response schema still
// documents the shape; the cast only tells the type provider that the text is that shape.
import type { FastifyReply } from 'fastify';

export function sendRawJson(reply: FastifyReply, json: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json as never);
}
