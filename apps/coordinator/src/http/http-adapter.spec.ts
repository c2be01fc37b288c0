import { describe, expect, it } from 'vitest';
import { createHttpAdapter } from './http-adapter.js';
import { REQUEST_ID_HEADER } from './request-id.js';

/** One GET on a bare route of the adapter's Fastify instance; `stopping` is what `isStopping` answers. */
async function get(stopping: boolean | undefined) {
  const adapter = createHttpAdapter({
    maxBodyBytes: 1024,
    ...(stopping === undefined ? {} : { isStopping: () => stopping }),
  });
  const fastify = adapter.getInstance();
  fastify.get('/probe', (_request, reply) => {
    void reply.send({ ok: true });
  });
  try {
    return await fastify.inject({ method: 'GET', url: '/probe', headers: { [REQUEST_ID_HEADER]: 'caller-1' } });
  } finally {
    await fastify.close();
  }
}

describe('createHttpAdapter', () => {
  it('closes every connection once stopping, and echoes the request id', async () => {
    const reply = await get(true);
    expect(reply.statusCode).toBe(200);
    expect(reply.headers.connection).toBe('close');
    expect(reply.headers[REQUEST_ID_HEADER]).toBe('caller-1');
  });

  it('keeps connections open while not stopping (and when no isStopping is given)', async () => {
    for (const stopping of [false, undefined]) {
      const reply = await get(stopping);
      expect(reply.statusCode).toBe(200);
      expect(reply.headers.connection).not.toBe('close');
      expect(reply.headers[REQUEST_ID_HEADER]).toBe('caller-1');
    }
  });
});
