/**
 * The agent SDK's lease: the library's {@link LibraryLease} plus the coordinator's signature of
 * its grant, which a resource's gate verifies before it compares the fence.
 */
import type { Lease as LibraryLease } from 'lease-fence';

/**
 * A lease held through the agent SDK: every field of the library's `Lease` (fence, deadline
 * anchored at the first send, `token`, …) and `signedToken`.
 *
 * @see libs/protocol/src/signed-grant.ts for the token's format.
 */
export interface Lease extends LibraryLease {
  /**
   * The coordinator-signed grant (a compact JWS, EdDSA): pass it to the resource with every write,
   * where the gate runtime verifies it (`FenceTokenVerifier`) and takes the fence from it. The same
   * string for every renewal of this fence.
   */
  readonly signedToken: string;
}

/** @internal The SDK lease for a library lease and the signed token of its grant. */
export const signedLease = (lease: LibraryLease, signedToken: string): Lease =>
  Object.freeze({ ...lease, signedToken });
