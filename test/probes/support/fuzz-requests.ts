/**
 * fast-check arbitraries of malformed HTTP requests to the coordinator, for the HTTP fuzz probe.
 *
 * A write request (`POST` to a lease or gate route) starts from a well-formed request of the right
 * role and gets exactly one **defect** that must make the coordinator refuse it (a bad token, a
 * wrong role, a bad id, a body that does not parse or does not fit the schema, a number out of
 * range, a wrong content type, a wrong method, an oversize body), plus any **noise** that must not
 * matter (long or duplicated headers). So a 2xx to a generated write is a finding, and the log's
 * head must not move over a batch. Reads and random paths get any mix of both.
 */
import fc from 'fast-check';
import { PROBE_AGENT_TOKENS, PROBE_TOKENS } from './probe-tokens.js';

/** One generated request. `defect` names what makes it invalid; `null` = a read that may be valid. */
export interface FuzzRequest {
  readonly method: string;
  readonly path: string;
  /** Header values; an array sends the header once per value. */
  readonly headers: Readonly<Record<string, string | readonly string[]>>;
  readonly body?: string;
  readonly defect: string | null;
}

/** The token of agent-0, which holds nothing the fuzz could change (every write it gets is defective). */
const AGENT = PROBE_AGENT_TOKENS[0]!;
const GATE = PROBE_TOKENS.gateInScope;
const VIEWER = PROBE_TOKENS.viewer;

/** A valid id, or one of the kinds of invalid ids (as they appear in a path, already encoded). */
const validId = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/);
const badPathId = fc.oneof(
  fc.constant(''),
  fc.constant('x'.repeat(201)),
  fc.constant('%20leading'),
  fc.constant('trailing%20'),
  fc.constant('ctl%01'),
  fc.constant('nul%00'),
  fc.constant('%zz'),
  fc.constant('%'),
  fc.constant('caf%C3%A9'),
  // Ids are 1 to 200 printable ASCII characters with no space at either end: these have a character outside that.
  fc
    .string({ unit: 'binary', minLength: 1, maxLength: 30 })
    .filter((text) => /[^\x20-\x7e]|^ | $/.test(text))
    .map((text) => encodeURIComponent(text)),
);

/** Numbers (as JSON text) that no numeric field accepts: huge, negative, fractional, strings, overflow. */
const badNumberText = fc.oneof(
  fc.constantFrom(
    '-1',
    '0',
    '1.5',
    '-0.5',
    '1e400',
    '-1e400',
    '1e20',
    '9007199254740993',
    '"100"',
    '"1e3"',
    'null',
    'true',
    '[]',
    '{}',
    '"NaN"',
    '0x10',
    '1_000',
    '.5',
    '+5',
    'Infinity',
  ),
  fc
    .double({ noNaN: true })
    .filter((n) => !Number.isSafeInteger(n) || n <= 0)
    .map((n) => JSON.stringify(n)),
  fc.integer({ max: 0 }).map(String),
);

/** A JSON text nested `depth` levels deep, of arrays or objects. */
const deeplyNested = fc
  .tuple(fc.integer({ min: 64, max: 50_000 }), fc.boolean())
  .map(([depth, arrays]) =>
    arrays ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`,
  );

/** Text that is not a JSON object. */
const notJsonObject = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.constantFrom(
    '',
    '{',
    '{"requestId": ',
    '{"requestId":"r"',
    'null',
    '[]',
    '"text"',
    '42',
    'true',
    '{}}',
    '{"a":1,}',
    "{'requestId':'r'}",
    '\u0000',
    '\ufeff{}',
  ),
  deeplyNested.map((text) => (text.startsWith('[') ? text : `{"x":${text}}`)),
  fc
    .jsonValue()
    .filter((value) => typeof value !== 'object' || value === null || Array.isArray(value))
    .map((value) => JSON.stringify(value)),
);

/** A route a write can target, with its role's token and a well-formed body template. */
interface WriteRoute {
  readonly name: string;
  readonly path: (id: string) => string;
  readonly token: string;
  /** The well-formed body's fields as JSON texts (so a defect can replace one with bad text). */
  readonly fields: Readonly<Record<string, string>>;
  /** Numeric fields a defect may replace with a bad number. */
  readonly numericFields: readonly string[];
}

const rejectionFields = {
  seq: '1',
  resource: '"deploy-fuzz"',
  kind: '"stale"',
  rejected: '{"holderId":"agent-0","fence":1}',
  current: '{"holderId":"agent-1","fence":2}',
};

const WRITE_ROUTES: readonly WriteRoute[] = [
  {
    name: 'acquire',
    path: (id) => `/v1/leases/${id}/acquire`,
    token: AGENT,
    fields: { requestId: '"fuzz-acquire"', ttlMillis: '1000' },
    numericFields: ['ttlMillis'],
  },
  {
    name: 'renew',
    path: (id) => `/v1/leases/${id}/renew`,
    token: AGENT,
    fields: { requestId: '"fuzz-renew"', fence: '1', ttlMillis: '1000' },
    numericFields: ['fence', 'ttlMillis'],
  },
  {
    name: 'release',
    path: (id) => `/v1/leases/${id}/release`,
    token: AGENT,
    fields: { fence: '1' },
    numericFields: ['fence'],
  },
  {
    name: 'rejections',
    path: (id) => `/v1/resources/${id}/rejections`,
    token: GATE,
    fields: rejectionFields,
    numericFields: ['seq'],
  },
  {
    name: 'admit',
    path: (id) => `/v1/resources/${id}/admit`,
    token: GATE,
    fields: { holderId: '"agent-0"', fence: '1' },
    numericFields: ['fence'],
  },
];

/** Fields a well-formed body may leave out: leaving them out is no defect. */
const OPTIONAL_FIELDS: readonly string[] = ['kind', 'ttlMillis'];

const toJsonText = (fields: Readonly<Record<string, string>>): string =>
  `{${Object.entries(fields)
    .map(([key, value]) => `${JSON.stringify(key)}:${value}`)
    .join(',')}}`;

/** Headers that must not change the outcome: a long header, unknown headers, a repeated Accept. */
const noise: fc.Arbitrary<Readonly<Record<string, string | readonly string[]>>> = fc.record(
  {
    'x-fuzz-pad': fc.integer({ min: 1, max: 12_000 }).map((length) => 'p'.repeat(length)),
    accept: fc.constantFrom(['application/json', 'text/html'], '*/*', 'application/xml', ''),
    'x-forwarded-for': fc.constantFrom('10.0.0.1', '::1, 127.0.0.1', 'not-an-ip'),
    'accept-encoding': fc.constantFrom('gzip', 'br, deflate', 'identity;q=0', 'x'.repeat(500)),
  },
  { requiredKeys: [] },
);

/** The defects a write can carry; each yields the request parts it replaces. */
type WriteDefect = (route: WriteRoute) => fc.Arbitrary<{
  defect: string;
  token?: string | null;
  authorization?: string;
  path?: string;
  method?: string;
  contentType?: string | null;
  body?: string;
}>;

const WRITE_DEFECTS: readonly WriteDefect[] = [
  () => fc.constant({ defect: 'no token', token: null }),
  () =>
    fc
      .oneof(
        fc.string({ minLength: 1, maxLength: 64 }).filter((t) => /^[\x21-\x7e]+$/.test(t)),
        fc.constant('x'.repeat(8_000)),
      )
      .map((token) => ({ defect: 'unknown token', token })),
  () =>
    fc
      .constantFrom(
        'Basic YWdlbnQ6c2VjcmV0',
        'Bearer',
        'Bearer ',
        'Token abc',
        `Basic ${AGENT}`,
        `Bearer${AGENT}`,
        `Digest ${AGENT}`,
        'Bearer \t',
        `${AGENT}`,
      )
      .map((authorization) => ({ defect: 'bad auth scheme', authorization })),
  (route) => fc.constant({ defect: 'wrong role', token: route.token === AGENT ? VIEWER : AGENT }),
  (route) =>
    fc.constant({
      defect: 'gate token on an agent route or viewer on a gate route',
      token: route.token === AGENT ? GATE : VIEWER,
    }),
  (route) =>
    fc.constant(
      route.token === GATE
        ? { defect: 'gate out of scope', path: route.path('other-1') }
        : { defect: 'gate on a lease route', token: PROBE_TOKENS.gateOutOfScope },
    ),
  (route) => badPathId.map((id) => ({ defect: `bad resource id ${id.slice(0, 20)}`, path: route.path(id) })),
  (route) =>
    fc
      .constantFrom('PUT', 'DELETE', 'PATCH', 'GET')
      .map((method) => ({ defect: `method ${method}`, method, path: route.path('deploy-x') })),
  () => notJsonObject.map((body) => ({ defect: 'body not a JSON object', body })),
  (route) =>
    fc.tuple(fc.constantFrom(...route.numericFields), badNumberText).map(([field, text]) => ({
      defect: `${field}=${text.slice(0, 20)}`,
      body: toJsonText({ ...route.fields, [field]: text }),
    })),
  (route) =>
    fc
      .constantFrom(
        '__proto__',
        'constructor',
        'prototype',
        'toString',
        'hasOwnProperty',
        'owner',
        'holderId',
        'x'.repeat(300),
      )
      .filter((key) => !(key in route.fields))
      .map((key) => ({
        defect: `unknown key ${key.slice(0, 20)}`,
        body: toJsonText({
          ...route.fields,
          [key]: key === '__proto__' ? '{"ttlMillis":1,"admin":true}' : '{"prototype":{"polluted":true}}',
        }),
      })),
  (route) =>
    fc.constantFrom(...Object.keys(route.fields).filter((f) => !OPTIONAL_FIELDS.includes(f))).map((field) => {
      const { [field]: _dropped, ...rest } = route.fields;
      return { defect: `missing ${field}`, body: toJsonText(rest) };
    }),
  (route) =>
    fc
      .constantFrom(
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/xml',
        'application/json; charset=utf-16',
        null,
      )
      .map((contentType) => ({
        defect: `content type ${String(contentType)}`,
        contentType,
        body: toJsonText(route.fields),
      })),
  (route) =>
    fc.integer({ min: 17_000, max: 200_000 }).map((length) => ({
      defect: `oversize body ${length}`,
      body: toJsonText({ ...route.fields, pad: JSON.stringify('p'.repeat(length)) }),
    })),
  (route) =>
    deeplyNested.map((nested) => ({
      defect: 'deeply nested value',
      body: toJsonText({ ...route.fields, [Object.keys(route.fields)[0]!]: nested }),
    })),
];

/** A generated write: a well-formed request of one route with one defect and some noise. */
export const invalidWrite: fc.Arbitrary<FuzzRequest> = fc
  .tuple(fc.constantFrom(...WRITE_ROUTES), fc.integer({ min: 0, max: WRITE_DEFECTS.length - 1 }), noise, validId)
  .chain(([route, defectIndex, headers, id]) =>
    WRITE_DEFECTS[defectIndex]!(route).map((change): FuzzRequest => {
      const token = change.token === undefined ? route.token : change.token;
      const authorization = change.authorization ?? (token === null ? undefined : `Bearer ${token}`);
      const contentType = change.contentType === undefined ? 'application/json' : change.contentType;
      return {
        method: change.method ?? 'POST',
        path: change.path ?? route.path(route.name === 'rejections' ? 'deploy-fuzz' : `deploy-${id}`),
        headers: {
          ...headers,
          ...(authorization === undefined ? {} : { authorization }),
          ...(contentType === null ? {} : { 'content-type': contentType }),
        },
        body: change.body ?? toJsonText(route.fields),
        defect: `${route.name}: ${change.defect}`,
      };
    }),
  );

/** Query strings for `/v1/events` and `/v1/stream`: huge, negative, float, text, duplicated, unknown. */
const eventsQuery = fc
  .array(
    fc.tuple(
      fc.constantFrom('after', 'limit', 'token', 'from', '__proto__', 'constructor', 'after[]', 'limit[x]'),
      fc.oneof(
        badNumberText.map((t) => encodeURIComponent(t.replace(/^"|"$/g, ''))),
        fc.nat().map(String),
        fc.constant(''),
      ),
    ),
    { maxLength: 4 },
  )
  .map((pairs) => (pairs.length === 0 ? '' : `?${pairs.map(([key, value]) => `${key}=${value}`).join('&')}`));

const READ_PATHS = [
  '/v1/leases',
  '/v1/events',
  '/v1/rejections',
  '/metrics',
  '/v1/stream',
  '/healthz',
  '/readyz',
  '/docs',
  '/docs/openapi.json',
  '/',
  '/v1',
  '/v1/leases/deploy-1',
  '/v1/resources',
  '/favicon.ico',
];

/** A read (GET/HEAD/OPTIONS) of any route, or any method on a random path, with any token and query. */
export const anyRead: fc.Arbitrary<FuzzRequest> = fc
  .tuple(
    fc.oneof(
      fc.constantFrom(...READ_PATHS),
      fc.webPath(),
      fc.string({ maxLength: 50 }).map((text) => `/${encodeURIComponent(text)}`),
      fc.constant(`/v1/${'a/'.repeat(2_000)}`),
    ),
    eventsQuery,
    fc.constantFrom('GET', 'GET', 'GET', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND', 'POST', 'DELETE'),
    fc.oneof(
      fc.constantFrom(VIEWER, AGENT, GATE, PROBE_TOKENS.gateOutOfScope),
      fc.constant(null),
      fc.string({ maxLength: 40 }).filter((t) => /^[\x21-\x7e]*$/.test(t)),
    ),
    noise,
    fc.option(notJsonObject, { nil: undefined }),
  )
  .map(([path, query, method, token, headers, body]): FuzzRequest => ({
    method,
    path: `${path.startsWith('/') ? path : `/${path}`}${query}`,
    headers: {
      ...headers,
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined || method === 'GET' || method === 'HEAD' ? {} : { body }),
    defect: method === 'POST' || method === 'DELETE' ? `random ${method}` : null,
  }));
