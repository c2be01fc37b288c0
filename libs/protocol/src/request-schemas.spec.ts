/**
 * Every request schema (request bodies `*BodySchema`, query strings `*QuerySchema`) refuses
 * unknown fields at every depth: docs/service.md § "Bad input and errors" promises it, and a gate or agent with a typo in a
 * nested field must get a 400 naming it, not a 202 that silently dropped it.
 */
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import * as protocol from './index.js';

/** The request schemas this package exports, found by name so a new one is checked without editing this file. */
const requestSchemas = Object.entries(protocol as Record<string, unknown>).filter(
  (entry): entry is [string, z.ZodType] =>
    /(?:Body|Query)Schema$/.test(entry[0]) && typeof (entry[1] as { safeParse?: unknown }).safeParse === 'function',
);

/** A valid input of each request schema (raw, as it arrives on the wire). */
const validInputs: Readonly<Record<string, unknown>> = {
  AcquireBodySchema: { requestId: 'r-1', ttlMillis: 5000 },
  RenewBodySchema: { requestId: 'r-2', fence: 3, ttlMillis: 5000 },
  ReleaseBodySchema: { fence: 3 },
  RejectionBodySchema: {
    seq: 1,
    resource: 'deploy-slot',
    kind: 'stale',
    rejected: { holderId: 'agent-a', fence: 2 },
    current: { holderId: 'agent-b', fence: 3 },
    wallMillis: 1,
  },
  RejectionBatchBodySchema: {
    items: [
      {
        seq: 1,
        kind: 'stale',
        rejected: { holderId: 'agent-a', fence: 2 },
        current: { holderId: 'agent-b', fence: 3 },
      },
      {
        seq: 2,
        rejected: { holderId: 'agent-a', fence: 2 },
        current: { holderId: 'agent-b', fence: 3 },
        wallMillis: 1,
      },
    ],
  },
  AdmitBodySchema: { holderId: 'agent-a', fence: 3 },
  FloorReportBodySchema: { holderId: 'agent-a', fence: 57 },
  GateStatusBodySchema: {
    resources: [
      {
        resource: 'deploy-slot',
        floor: { holderId: 'agent-a', fence: 3 },
        outboxBacklog: 0,
        refusals: 1,
        invalidTokens: 2,
      },
    ],
    reportedAtMillis: 1,
  },
  HolderFenceBodySchema: { holderId: 'agent-a', fence: 3 },
  EventsQuerySchema: { after: '0', limit: '10' },
  NoQuerySchema: {},
  StreamQuerySchema: { after: '0', token: 't' },
};

/** Internal zod definition of a schema node (zod 4's `_zod.def`): only what the walk reads. */
interface Def {
  readonly type: string;
  readonly shape?: Record<string, z.ZodType>;
  readonly catchall?: z.ZodType;
  readonly innerType?: z.ZodType;
  readonly in?: z.ZodType;
  readonly out?: z.ZodType;
  readonly element?: z.ZodType;
  readonly options?: readonly z.ZodType[];
  readonly left?: z.ZodType;
  readonly right?: z.ZodType;
  readonly valueType?: z.ZodType;
  readonly items?: readonly z.ZodType[];
}
const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** Paths (dotted, `<root>` for the top) of every object node in `schema` that does not refuse unknown keys. */
function lenientObjectsIn(schema: z.ZodType, path = '<root>'): string[] {
  const def = defOf(schema);
  const children: [string, z.ZodType | undefined][] = [
    ...Object.entries(def.shape ?? {}).map(([key, child]): [string, z.ZodType] => [
      path === '<root>' ? key : `${path}.${key}`,
      child,
    ]),
    [path, def.innerType],
    [path, def.in],
    [path, def.out],
    [`${path}[]`, def.element],
    [`${path}{}`, def.valueType],
    [path, def.left],
    [path, def.right],
    ...(def.options ?? []).map((option): [string, z.ZodType] => [path, option]),
    ...(def.items ?? []).map((item, index): [string, z.ZodType] => [`${path}[${index}]`, item]),
  ];
  const here =
    def.type === 'object' && (def.catchall === undefined || defOf(def.catchall).type !== 'never') ? [path] : [];
  return [
    ...here,
    ...children.flatMap(([childPath, child]) => (child === undefined ? [] : lenientObjectsIn(child, childPath))),
  ];
}

/** Paths of every plain object inside `value` (the root included), as zod names them in an issue. */
function objectPathsOf(value: unknown, path: readonly (string | number)[] = []): (readonly (string | number)[])[] {
  if (typeof value !== 'object' || value === null) return [];
  const nested = Object.entries(value).flatMap(([key, child]) =>
    objectPathsOf(child, [...path, Array.isArray(value) ? Number(key) : key]),
  );
  return Array.isArray(value) ? nested : [path, ...nested];
}

/** A deep copy of `value` with `extra: 1` added to the object at `path`. */
function withExtraAt(value: unknown, path: readonly (string | number)[]): unknown {
  const copy = structuredClone(value) as Record<string | number, unknown>;
  const target = path.reduce<Record<string | number, unknown>>(
    (node, key) => node[key] as Record<string | number, unknown>,
    copy,
  );
  target.extra = 1;
  return copy;
}

describe('request schemas', () => {
  it('are found: every body and query schema of the API', () => {
    expect(requestSchemas.map(([name]) => name).sort()).toEqual(
      expect.arrayContaining([
        'AcquireBodySchema',
        'AdmitBodySchema',
        'EventsQuerySchema',
        'RejectionBodySchema',
        'ReleaseBodySchema',
        'RenewBodySchema',
        'StreamQuerySchema',
      ]),
    );
  });

  it.each(requestSchemas)('%s refuses unknown keys in every object it holds, at every depth', (_name, schema) => {
    expect(lenientObjectsIn(schema)).toEqual([]);
  });

  it.each(requestSchemas)(
    '%s accepts its valid input, and refuses it with an unknown field added to any object in it, naming that object',
    (name, schema) => {
      // Arrange
      const valid = validInputs[name];
      expect(valid, `add a valid input of ${name} to validInputs`).toBeDefined();
      expect(schema.safeParse(valid).success).toBe(true);

      for (const path of objectPathsOf(valid)) {
        // Act
        const result = schema.safeParse(withExtraAt(valid, path));

        // Assert
        expect(result.success, `extra field at ${path.join('.') || '<root>'}`).toBe(false);
        expect(result.error?.issues).toContainEqual(
          expect.objectContaining({ code: 'unrecognized_keys', keys: ['extra'], path }),
        );
      }
    },
  );

  it('finds a lenient nested object (the walk is not vacuous)', () => {
    expect(lenientObjectsIn(protocol.RecordedRejectionSchema)).toEqual(
      expect.arrayContaining(['<root>', 'rejected', 'current']),
    );
  });
});
