/**
 * How an agent writes to the deploy slot: one POST per step, carrying its signed grant. The slot
 * may be restarting (the demo kills it now and then), so connection failures are retried briefly.
 */
import type { Lease } from '@lease-fence/client';

/** What the slot said about one write. */
export type SlotWriteResult =
  | { readonly ok: true; readonly deploymentId: number }
  | {
      readonly ok: false;
      readonly reason: 'refused';
      readonly kind: string;
      readonly floorFence: number;
      readonly floorHolderId: string;
    }
  | { readonly ok: false; readonly reason: 'invalid-token'; readonly tokenReason: string }
  | { readonly ok: false; readonly reason: 'unreachable'; readonly message: string };

/**
 * Sends `step` to the slot under `lease` (its `signedToken`, which the slot verifies).
 * @param slotUrl - The deploy slot's base URL.
 * @param attempts - Tries while the slot is unreachable (300 ms apart).
 */
export const writeToSlot = async (
  slotUrl: string,
  lease: Pick<Lease, 'resource' | 'signedToken'>,
  step: string,
  attempts = 10,
): Promise<SlotWriteResult> => {
  let lastError = '';
  for (let attempt = 1; attempt <= attempts; attempt += 1) {
    try {
      const response = await fetch(`${slotUrl}/slots/${encodeURIComponent(lease.resource)}/deploy`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ signedToken: lease.signedToken, step }),
        signal: AbortSignal.timeout(2000),
      });
      const body = (await response.json()) as {
        deployment?: { id: number };
        error?: string;
        reason?: string;
        rejection?: { current: { fence: number; holderId: string } };
      };
      if (response.status === 200 && body.deployment !== undefined)
        return { ok: true, deploymentId: body.deployment.id };
      if (response.status === 409 && body.rejection !== undefined) {
        return {
          ok: false,
          reason: 'refused',
          kind: body.error ?? 'stale-fence',
          floorFence: body.rejection.current.fence,
          floorHolderId: body.rejection.current.holderId,
        };
      }
      if (response.status === 403 && body.error === 'invalid-fence-token')
        return { ok: false, reason: 'invalid-token', tokenReason: body.reason ?? 'unknown' };
      return { ok: false, reason: 'unreachable', message: `slot answered HTTP ${response.status}` };
    } catch (error) {
      lastError =
        error instanceof Error
          ? `${error.message}${error.cause instanceof Error ? ` (${error.cause.message})` : ''}`
          : String(error);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  }
  return { ok: false, reason: 'unreachable', message: lastError };
};
