/**
 * Routes are declared once, on the controllers: Nest's own decorators say the method and path
 * (`@Get`, `@Post`, `@Controller`) and who may call (`@UseGuards` with a role guard); {@link ApiDoc}
 * adds what only documentation needs (operation id, summary, body and query schemas, and every
 * status the route answers). {@link routesOf} reads both back into the route table the OpenAPI
 * document, the `/docs` page and the 405 middleware are built from.
 */
import { RequestMethod, SetMetadata, type Type } from '@nestjs/common';
import { GUARDS_METADATA, METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { ErrorReplySchema } from '@lease-fence/protocol';
import type { z } from 'zod';
import type { RequiredRole } from '../auth/principal.js';

/** One documented reply of a route. */
export interface ApiReply {
  readonly description: string;
  /** JSON body schemas (several = one of them), or `'text'` / `'html'` for a text body. */
  readonly schemas?: readonly z.ZodType[] | 'text' | 'html';
}

/** What {@link ApiDoc} declares about a route, beside what Nest's decorators say. */
export interface ApiDocDeclaration {
  /** The OpenAPI `operationId`: unique over the API, lower camel case (`acquireLease`). */
  readonly operationId: string;
  readonly summary: string;
  /**
   * Role a caller needs when no role guard says it (a WebSocket path, checked before its
   * upgrade); `null` for no token. A route with a role guard takes the guard's role.
   */
  readonly role?: RequiredRole | null;
  readonly body?: z.ZodType;
  readonly query?: z.ZodObject;
  /** Every status the route answers (405 for another method is added to every route). */
  readonly replies: Readonly<Record<number, ApiReply>>;
}

/** One route of the table. `path` uses OpenAPI's `{param}` syntax. */
export interface ApiRoute extends Omit<ApiDocDeclaration, 'role'> {
  readonly method: 'get' | 'post';
  readonly path: string;
  /** Role required (`viewer` = any token), or `null` for no token. */
  readonly role: RequiredRole | null;
}

const API_DOC = 'lease-fence:api-doc';

/** Method decorator: the documentation of a route (see the module description). */
export const ApiDoc = (declaration: ApiDocDeclaration): MethodDecorator => SetMetadata(API_DOC, declaration);

/** A role guard class says its role (`auth/role.guards.ts`). */
interface RoleGuardClass {
  readonly requiredRole?: RequiredRole;
}

const METHOD_NAMES: Partial<Record<RequestMethod, 'get' | 'post'>> = {
  [RequestMethod.GET]: 'get',
  [RequestMethod.POST]: 'post',
};

/** `'v1/leases'` + `':resource/acquire'` → `'/v1/leases/{resource}/acquire'`. */
const openApiPath = (...parts: readonly (string | undefined)[]): string => {
  const path = parts
    .flatMap((part) => (part ?? '').split('/'))
    .filter((segment) => segment !== '')
    .map((segment) => segment.replace(/^:(\w+)$/, '{$1}'));
  return `/${path.join('/')}`;
};

/**
 * The route table of `controllers`: every method that has both a Nest route decorator and
 * {@link ApiDoc}, in declaration order.
 * @throws Error when a routed method has no {@link ApiDoc}, uses a method other than GET or POST,
 *   or two routes share an `operationId`: the documentation must cover every route, once.
 */
export function routesOf(controllers: readonly Type[]): readonly ApiRoute[] {
  const routes: ApiRoute[] = [];
  for (const controller of controllers) {
    const base = Reflect.getMetadata(PATH_METADATA, controller) as string | undefined;
    for (const name of Object.getOwnPropertyNames(controller.prototype)) {
      const handler = (controller.prototype as Record<string, unknown>)[name];
      if (name === 'constructor' || typeof handler !== 'function') continue;
      const path = Reflect.getMetadata(PATH_METADATA, handler) as string | undefined;
      if (path === undefined) continue; // not a route
      const where = `${controller.name}.${name}`;
      const declaration = Reflect.getMetadata(API_DOC, handler) as ApiDocDeclaration | undefined;
      if (declaration === undefined) throw new Error(`routesOf: ${where} is a route without @ApiDoc`);
      const method = METHOD_NAMES[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod];
      if (method === undefined) throw new Error(`routesOf: ${where} uses a method the route table does not know`);
      const guards = (Reflect.getMetadata(GUARDS_METADATA, handler) ?? []) as readonly RoleGuardClass[];
      const guardRole = guards.map((guard) => guard.requiredRole).find((role) => role !== undefined);
      const { role: declaredRole, ...rest } = declaration;
      routes.push({ ...rest, method, path: openApiPath(base, path), role: guardRole ?? declaredRole ?? null });
    }
  }
  const seen = new Set<string>();
  for (const route of routes) {
    if (seen.has(route.operationId)) throw new Error(`routesOf: operationId ${route.operationId} is used twice`);
    seen.add(route.operationId);
  }
  return routes;
}

const error = (description: string): ApiReply => ({ description, schemas: [ErrorReplySchema] });

/** Replies several routes share. */
export const REPLIES = {
  badInput: error(
    'Bad input: `issues` names each field (unknown fields, wrong types, ids over 200 characters, ttl out of bounds, malformed JSON). Nothing changed.',
  ),
  unauthenticated: error('Missing or unknown bearer token.'),
  forbidden: error("The token's role may not do this (or, for a gate, this resource is not one of its patterns)."),
  tooLarge: error('The body is larger than the configured limit (`LEASE_FENCE_MAX_BODY_BYTES`).'),
  unsupportedMediaType: error(
    "The body's charset is not one JSON may use, or the Content-Type header cannot be parsed.",
  ),
  unavailable: error(
    'The coordinator cannot serve: `reason` is `recovering`, `superseded`, `unhealthy`, `closed` or `event-log-unavailable`; `retryable: true`.',
  ),
  upgradeRequired: error(
    'A plain GET without `Upgrade: websocket`: the reply says how to connect (`Upgrade: websocket` header).',
  ),
  shuttingDown: error('The coordinator is shutting down (`retryable: true`): connect to it again once it is back.'),
} as const satisfies Record<string, ApiReply>;

/** The error replies of a route that writes: bad input, auth, body size and type, unavailable. */
export const WRITE_REPLIES = {
  400: REPLIES.badInput,
  401: REPLIES.unauthenticated,
  403: REPLIES.forbidden,
  413: REPLIES.tooLarge,
  415: REPLIES.unsupportedMediaType,
  503: REPLIES.unavailable,
} as const;

/** The error replies of a read with a token. */
export const READ_REPLIES = { 401: REPLIES.unauthenticated, 503: REPLIES.unavailable } as const;

/** The 405 every route answers for a method it does not have (added to every route by the document). */
export const METHOD_NOT_ALLOWED = error(
  'The path is a route, but not for this method: `Allow` lists the methods it has.',
);
