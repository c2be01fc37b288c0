import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDeployRecorder, type DeployRecorder } from './deploy-recorder.js';

describe('the deploy recorder (the slots’ upstream)', () => {
  let recorder: DeployRecorder;
  beforeEach(async () => {
    recorder = await openDeployRecorder({ port: 0 });
  });
  afterEach(async () => {
    await recorder.close();
  });

  const post = (path: string, body: string) =>
    fetch(`${recorder.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

  it('records each deploy that reaches it, in order, and lists them', async () => {
    const first = await post(
      '/slots/deploy-slot-a/deploy',
      JSON.stringify({ step: 'claim', holderId: 'agent-1', fence: 3 }),
    );
    await post('/slots/deploy-slot-b/deploy', JSON.stringify({ step: 'done' }));

    const listed = (await (await fetch(`${recorder.url}/deploys`)).json()) as { deployments: unknown[] };

    expect(first.status).toBe(200);
    expect(listed.deployments).toEqual([
      {
        id: 1,
        resource: 'deploy-slot-a',
        step: 'claim',
        holderId: 'agent-1',
        fence: 3,
        receivedAtMillis: expect.any(Number),
      },
      { id: 2, resource: 'deploy-slot-b', step: 'done', receivedAtMillis: expect.any(Number) },
    ]);
  });

  it.each([
    ['not JSON', '{', 'body is not JSON'],
    ['no step', '{}', 'step must be a string'],
    ['a fence that is not an integer', '{"step":"x","fence":1.5}', 'fence must be an integer'],
  ])('answers 400 naming the field for %s, and records nothing', async (_what, body, message) => {
    const response = await post('/slots/deploy-slot-a/deploy', body);

    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ ok: false, reason: 'invalid-request', message });
    expect(recorder.deployments()).toEqual([]);
  });
});
