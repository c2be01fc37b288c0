/**
 * The role check shared by the HTTP guards and the stream's upgrade handler.
 */
import { ForbiddenError } from './auth.errors.js';
import { gateCovers, type Principal, type RequiredRole } from './principal.js';

/**
 * Checks that `principal` may act with `role` (and, for gates, on `resource`).
 * `viewer` is satisfied by every role: agents and gates may read too.
 * @throws {@link ForbiddenError} naming the role required and the role held.
 */
export function authorize(principal: Principal, role: RequiredRole, resource?: string): void {
  if (role === 'viewer') return;
  if (principal.role !== role)
    throw new ForbiddenError(`this operation needs the ${role} role; the token has the ${principal.role} role`);
  if (principal.role === 'gate' && resource !== undefined && !gateCovers(principal, resource)) {
    throw new ForbiddenError(
      `gate ${principal.gateId} may not report for resource ${JSON.stringify(resource)}; its resources are ${principal.resources.join(', ')}`,
    );
  }
}
