/**
 * Who is calling, as established by a bearer token from the tokens file. The holder of a
 * grant is always the authenticated agent's `holderId`, never a field the caller chooses.
 */
import { resourceMatches } from '@lease-fence/protocol';

/** An agent: may acquire, renew and release leases as `holderId`, and read. */
export interface AgentPrincipal {
  readonly role: 'agent';
  /** The holder id every lease this agent takes is granted to. */
  readonly holderId: string;
}

/** A resource's FenceGate: may report rejections and admits for matching resources, and read. */
export interface GatePrincipal {
  readonly role: 'gate';
  /** Recorded as `gateId` in `FenceRejected` / `FenceAdmitted`. */
  readonly gateId: string;
  /** Resource names or prefixes ending in `*` this gate may report for. */
  readonly resources: readonly string[];
}

/** A dashboard or operator: may read (leases, events, rejections, the stream, metrics). */
export interface ViewerPrincipal {
  readonly role: 'viewer';
}

/** Any authenticated caller. */
export type Principal = AgentPrincipal | GatePrincipal | ViewerPrincipal;

/** The role a route requires; `viewer` is satisfied by every role (agents and gates may read). */
export type RequiredRole = Principal['role'];

/** Whether the gate may report for `resource` (one of its patterns covers it). */
export function gateCovers(gate: GatePrincipal, resource: string): boolean {
  return gate.resources.some((pattern) => resourceMatches(pattern, resource));
}
