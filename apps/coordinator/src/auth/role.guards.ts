/**
 * Route guards for the three roles. Each authenticates the bearer token, checks the role, and
 * leaves the {@link Principal} on the request for {@link CurrentPrincipal}. One class per role,
 * so no metadata is reflected per request.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { type CanActivate, type ExecutionContext, Injectable, createParamDecorator } from '@nestjs/common';
import { authorize } from './authorize.js';
import type { Principal, RequiredRole } from './principal.js';
import { TokenRegistry } from './token-registry.js';

/** The parts of an HTTP request the guards read and write. */
export interface AuthenticatedRequest {
  readonly headers: IncomingHttpHeaders;
  readonly params?: Readonly<Record<string, string | undefined>>;
  /**
   * Set once the token is authenticated: on `/v1` by the authentication middleware (before the
   * body is parsed, on the Node request), elsewhere by the role guard. Only a guard's `authorize`
   * lets the request in.
   */
  principal?: Principal;
  /** The Node request Fastify's request wraps (where the middleware left the principal). */
  readonly raw?: { readonly principal?: Principal };
}

abstract class RoleGuard implements CanActivate {
  protected abstract readonly role: RequiredRole;

  constructor(private readonly tokens: TokenRegistry) {}

  /**
   * @throws {@link UnauthenticatedError} without a listed bearer token.
   * @throws {@link ForbiddenError} for the wrong role or, for gates, a resource outside their patterns.
   */
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const principal =
      request.principal ?? request.raw?.principal ?? this.tokens.byAuthorization(request.headers.authorization);
    authorize(principal, this.role, request.params?.resource);
    request.principal = principal;
    return true;
  }
}

/** Any listed token (viewer, agent or gate): the read endpoints. */
@Injectable()
export class ViewerGuard extends RoleGuard {
  /** The role this guard requires, read by the route table (`docs/api-doc.ts`). */
  static readonly requiredRole = 'viewer';
  protected readonly role = ViewerGuard.requiredRole;
  constructor(tokens: TokenRegistry) {
    super(tokens);
  }
}

/** An agent token: acquire, renew, release. */
@Injectable()
export class AgentGuard extends RoleGuard {
  /** The role this guard requires, read by the route table (`docs/api-doc.ts`). */
  static readonly requiredRole = 'agent';
  protected readonly role = AgentGuard.requiredRole;
  constructor(tokens: TokenRegistry) {
    super(tokens);
  }
}

/** A gate token whose resource patterns cover `:resource`: rejections and admits. */
@Injectable()
export class GateGuard extends RoleGuard {
  /** The role this guard requires, read by the route table (`docs/api-doc.ts`). */
  static readonly requiredRole = 'gate';
  protected readonly role = GateGuard.requiredRole;
  constructor(tokens: TokenRegistry) {
    super(tokens);
  }
}

/** Parameter decorator: the {@link Principal} a role guard authenticated for this request. */
export const CurrentPrincipal = createParamDecorator(
  (_data: unknown, context: ExecutionContext): Principal | undefined =>
    context.switchToHttp().getRequest<AuthenticatedRequest>().principal,
);
