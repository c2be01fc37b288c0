import { Controller, Get, Post, UseGuards } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { AgentGuard } from '../auth/role.guards.js';
import { ApiDoc, routesOf } from './api-doc.js';
import { API_ROUTES, NAMED_SCHEMAS } from './api-routes.js';
import { buildOpenApiDocument } from './openapi-document.js';

type Operation = {
  operationId: string;
  responses: Record<string, unknown>;
  security: unknown[];
  'x-lease-fence-role': string;
};

const document = buildOpenApiDocument(API_ROUTES, NAMED_SCHEMAS, 'test') as {
  paths: Record<string, Record<string, Operation>>;
};
const operation = (path: string, method: string): Operation => document.paths[path]![method]!;

describe('routesOf', () => {
  it('reads method, path and role from the Nest decorators and the rest from @ApiDoc', () => {
    // Arrange
    @Controller('v1/things')
    class ThingsController {
      @Post(':resource/touch')
      @UseGuards(AgentGuard)
      @ApiDoc({ operationId: 'touchThing', summary: 'Touch.', replies: { 200: { description: 'Touched.' } } })
      touch(): void {}

      @Get()
      @ApiDoc({
        operationId: 'listThings',
        summary: 'List.',
        role: 'viewer',
        replies: { 200: { description: 'Things.' } },
      })
      list(): void {}

      helper(): void {}
    }

    // Act
    const routes = routesOf([ThingsController]);

    // Assert
    expect(routes.map(({ method, path, role, operationId }) => ({ method, path, role, operationId }))).toEqual([
      { method: 'post', path: '/v1/things/{resource}/touch', role: 'agent', operationId: 'touchThing' },
      { method: 'get', path: '/v1/things', role: 'viewer', operationId: 'listThings' },
    ]);
  });

  it('refuses a route without @ApiDoc, so no route goes undocumented', () => {
    @Controller('v1/bare')
    class BareController {
      @Get()
      list(): void {}
    }
    expect(() => routesOf([BareController])).toThrow('BareController.list is a route without @ApiDoc');
  });

  it('refuses an operationId used twice', () => {
    @Controller()
    class TwiceController {
      @Get('a')
      @ApiDoc({ operationId: 'same', summary: 'A.', replies: { 200: { description: 'A.' } } })
      a(): void {}

      @Get('b')
      @ApiDoc({ operationId: 'same', summary: 'B.', replies: { 200: { description: 'B.' } } })
      b(): void {}
    }
    expect(() => routesOf([TwiceController])).toThrow('operationId same is used twice');
  });
});

describe('the OpenAPI document', () => {
  it('gives every operation an operationId, once', () => {
    const ids = Object.values(document.paths).flatMap((methods) => Object.values(methods).map((op) => op.operationId));
    expect(ids).toHaveLength(API_ROUTES.length);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.every((id) => /^[a-z][A-Za-z]+$/.test(id))).toBe(true);
  });

  it('documents both WebSocket paths with 101 and the 426 a plain GET gets', () => {
    expect(Object.keys(operation('/v1/stream', 'get').responses)).toEqual(
      expect.arrayContaining(['101', '400', '401', '426', '503']),
    );
    expect(Object.keys(operation('/v1/gates/link', 'get').responses)).toEqual(
      expect.arrayContaining(['101', '401', '403', '426', '503']),
    );
    expect(operation('/v1/gates/link', 'get')['x-lease-fence-role']).toBe('gate');
  });

  it('takes each role from the route guard: agents acquire, gates report, any token reads', () => {
    expect(operation('/v1/leases/{resource}/acquire', 'post')['x-lease-fence-role']).toBe('agent');
    expect(operation('/v1/resources/{resource}/rejections', 'post')['x-lease-fence-role']).toBe('gate');
    expect(operation('/v1/events', 'get')['x-lease-fence-role']).toBe('viewer');
    expect(operation('/v1/keys', 'get')).toMatchObject({ security: [], 'x-lease-fence-role': 'none' });
  });

  it('lists the body statuses on every write (400, 413, 415) and 405 on every route', () => {
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        expect(op.responses, `${method} ${path}`).toHaveProperty('405');
        if (method === 'post')
          expect(Object.keys(op.responses), `${method} ${path}`).toEqual(
            expect.arrayContaining(['400', '401', '403', '413', '415']),
          );
      }
    }
  });
});
