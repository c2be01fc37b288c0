/**
 * How an agent deploys: one POST per step to the slot's `lease-fence-gate` sidecar, with its
 * lease's signed token in the `Lease-Fence-Token` header. The gate admits the write (and forwards
 * it to the deploy recorder) only for the current fence; its refusals come back as 409 (stale or
 * double-granted fence) or 401 (invalid token). The gate may be restarting (the demo kills it now
 * and then), so connection failures are retried briefly.
 */
import type { Lease } from '@lease-fence/client';

/** The header the gate reads the signed token from (`FENCE_TOKEN_HEADER` of `apps/gate`). */
export const LEASE_FENCE_TOKEN_HEADER = 'Lease-Fence-Token';

/** A holder and its fence, as the gate's 409 names them. */
export interface HolderFence {
  readonly holderId: string;
  readonly fence: number;
}

/** What the gate said about one write. */
export type DeployResult =
  | { readonly ok: true; readonly deploymentId: number }
  | {
      readonly ok: false;
      readonly reason: 'refused';
      /** `stale-fence` or `double-grant`. */
      readonly kind: string;
      /** The gate's refusal number (reported to the coordinator as `FenceRejected` with this seq). */
      readonly seq: number;
      readonly rejected: HolderFence;
      /** The gate's floor: the holder it admits now. */
      readonly current: HolderFence;
    }
  | { readonly ok: false; readonly reason: 'invalid-token'; readonly message: string }
  | { readonly ok: false; readonly reason: 'unreachable'; readonly message: string };

/**
 * Sends `step` through the slot's gate under `lease`.
 * @param gateUrl - The sidecar's base URL for `lease.resource`.
 * @param attempts - Tries while the gate is unreachable or restarting (300 ms apart).
 */
export const deployThroughGate = async (
  gateUrl: string,
  lease: Pick<Lease, 'resource' | 'signedToken' | 'holderId' | 'fence'>,
  step: string,
  attempts = 10,
): Promise<DeployResult> => {
  let lastError = '';
  for (let attempt = 1; attempt <= attempts; attempt += 1) {
    try {
      const response = await fetch(`${gateUrl}/slots/${encodeURIComponent(lease.resource)}/deploy`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [LEASE_FENCE_TOKEN_HEADER]: lease.signedToken },
        body: JSON.stringify({ step, holderId: lease.holderId, fence: lease.fence }),
        signal: AbortSignal.timeout(2000),
      });
      const body = (await response.json()) as {
        deployment?: { id: number };
        reason?: string;
        message?: string;
        seq?: number;
        rejected?: HolderFence;
        current?: HolderFence;
      };
      if (response.status === 200 && body.deployment !== undefined)
        return { ok: true, deploymentId: body.deployment.id };
      if (response.status === 409 && body.rejected !== undefined && body.current !== undefined) {
        return {
          ok: false,
          reason: 'refused',
          kind: body.reason ?? 'stale-fence',
          seq: body.seq ?? 0,
          rejected: body.rejected,
          current: body.current,
        };
      }
      if (response.status === 401) return { ok: false, reason: 'invalid-token', message: body.message ?? 'unknown' };
      lastError = `the gate answered HTTP ${response.status}${body.reason === undefined ? '' : ` (${body.reason})`}`;
      // 502/503: the gate is up but its upstream, floor store or keys are not yet; try again.
      if (response.status < 500) return { ok: false, reason: 'unreachable', message: lastError };
    } catch (error) {
      lastError =
        error instanceof Error
          ? `${error.message}${error.cause instanceof Error ? ` (${error.cause.message})` : ''}`
          : String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  return { ok: false, reason: 'unreachable', message: lastError };
};
