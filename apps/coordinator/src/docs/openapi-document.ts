/**
 * The OpenAPI 3.1 document of the coordinator, generated from the route table (the controllers'
 * declarations, `docs/api-routes.ts`) and the protocol's zod schemas with `z.toJSONSchema`
 * (OpenAPI 3.1 schema objects are JSON Schema 2020-12, zod's default target).
 */
import { z } from 'zod';
import { type ApiReply, type ApiRoute, METHOD_NOT_ALLOWED } from './api-doc.js';

type JsonObject = Record<string, unknown>;

const componentRef = (id: string): string => `#/components/schemas/${id}`;

/** Converts every named schema once; request bodies as zod *input* (defaults optional), replies as *output*. */
function buildComponents(NAMED_SCHEMAS: Readonly<Record<string, z.ZodType>>): {
  schemas: Record<string, JsonObject>;
  idOf: Map<z.ZodType, string>;
} {
  const idOf = new Map<z.ZodType, string>();
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(NAMED_SCHEMAS)) {
    registry.add(schema, { id });
    idOf.set(schema, id);
  }
  const input = z.toJSONSchema(registry, { uri: componentRef, io: 'input', unrepresentable: 'any' }).schemas as Record<
    string,
    JsonObject
  >;
  const output = z.toJSONSchema(registry, { uri: componentRef, io: 'output', unrepresentable: 'any' })
    .schemas as Record<string, JsonObject>;
  const schemas: Record<string, JsonObject> = {};
  for (const id of Object.keys(NAMED_SCHEMAS)) {
    const { $schema: _schema, $id: _id, ...rest } = (id.endsWith('Body') ? input[id] : output[id]) ?? {};
    schemas[id] = rest;
  }
  return { schemas, idOf };
}

const jsonSchemaOf = (schema: z.ZodType, idOf: ReadonlyMap<z.ZodType, string>): JsonObject => {
  const id = idOf.get(schema);
  if (id !== undefined) return { $ref: componentRef(id) };
  const { $schema: _schema, ...rest } = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) as JsonObject;
  return rest;
};

const replyObject = (reply: ApiReply, idOf: ReadonlyMap<z.ZodType, string>): JsonObject => {
  if (reply.schemas === undefined) return { description: reply.description };
  if (reply.schemas === 'text')
    return { description: reply.description, content: { 'text/plain': { schema: { type: 'string' } } } };
  if (reply.schemas === 'html')
    return { description: reply.description, content: { 'text/html': { schema: { type: 'string' } } } };
  const [only, ...more] = reply.schemas.map((s) => jsonSchemaOf(s, idOf));
  const schema = more.length === 0 ? only : { oneOf: [only, ...more] };
  return { description: reply.description, content: { 'application/json': { schema } } };
};

/**
 * Builds the OpenAPI 3.1 document: one operation per route, with its `operationId`, and every
 * status it answers (each also 405 for a method the path does not have).
 * @param routes - The route table.
 * @param namedSchemas - Schemas to put in `components.schemas` under these names (referenced by `$ref`).
 * @param version - The service version shown in `info.version`.
 */
export function buildOpenApiDocument(
  routes: readonly ApiRoute[],
  namedSchemas: Readonly<Record<string, z.ZodType>>,
  version: string,
): JsonObject {
  const { schemas, idOf } = buildComponents(namedSchemas);
  const paths: Record<string, Record<string, JsonObject>> = {};
  for (const route of routes) {
    const parameters: JsonObject[] = [];
    for (const match of route.path.matchAll(/\{(\w+)\}/g)) {
      parameters.push({
        name: match[1],
        in: 'path',
        required: true,
        schema: { type: 'string', minLength: 1, maxLength: 200 },
        description: 'Resource id (URL-encode `/`).',
      });
    }
    if (route.query !== undefined) {
      const query = z.toJSONSchema(route.query, { io: 'input', unrepresentable: 'any' }) as {
        properties?: Record<string, JsonObject>;
        required?: string[];
      };
      for (const [name, schema] of Object.entries(query.properties ?? {})) {
        parameters.push({ name, in: 'query', required: query.required?.includes(name) ?? false, schema });
      }
    }
    const replies = { ...route.replies, 405: METHOD_NOT_ALLOWED };
    const operation: JsonObject = {
      operationId: route.operationId,
      summary: route.summary,
      security: route.role === null ? [] : [{ bearer: [] }],
      'x-lease-fence-role': route.role ?? 'none',
      responses: Object.fromEntries(
        Object.entries(replies).map(([status, reply]) => [status, replyObject(reply, idOf)]),
      ),
    };
    if (parameters.length > 0) operation.parameters = parameters;
    if (route.body !== undefined)
      operation.requestBody = {
        required: true,
        content: { 'application/json': { schema: jsonSchemaOf(route.body, idOf) } },
      };
    (paths[route.path] ??= {})[route.method] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'lease-fence coordinator',
      version,
      description:
        'Leases with fencing tokens. The holder of a grant is the authenticated agent. ' +
        "Denials are replies (409/410 with `ok: false` and a `reason`), not errors. Instants in replies are in the coordinator's clock domain: display them, never measure against them.",
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } }, schemas },
    paths,
  };
}
