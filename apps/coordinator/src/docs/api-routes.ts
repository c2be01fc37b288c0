/**
 * The coordinator's route table, read from the controllers' own declarations ({@link routesOf}):
 * the OpenAPI document, the `/docs` page and the 405 middleware are built from it. Request and
 * reply shapes are the protocol's zod schemas (the one copy); {@link NAMED_SCHEMAS} names those
 * the document puts in `components.schemas`.
 */
import type { Type } from '@nestjs/common';
import {
  AcquireBodySchema,
  AdmitBodySchema,
  AlreadyHeldReplySchema,
  CoordinatorToGateFrameSchema,
  ErrorReplySchema,
  EventsReplySchema,
  ExpiredReplySchema,
  FloorReportReplySchema,
  GrantReplySchema,
  HeldReplySchema,
  KeysReplySchema,
  LeasesReplySchema,
  LockDelayReplySchema,
  NotHolderReplySchema,
  OkReplySchema,
  ReadinessReplySchema,
  RejectionAcceptedReplySchema,
  RejectionBodySchema,
  RejectionsReplySchema,
  ReleaseBodySchema,
  RenewBodySchema,
  StreamFrameSchema,
  WhoAmIReplySchema,
} from '@lease-fence/protocol';
import type { z } from 'zod';
import { HealthController } from '../health/health.controller.js';
import { EventsController } from '../leases/events.controller.js';
import { GatesController } from '../leases/gates.controller.js';
import { LeasesController } from '../leases/leases.controller.js';
import { WhoAmIController } from '../leases/whoami.controller.js';
import { KeysController } from '../signing/keys.controller.js';
import { UpgradeRequiredController } from '../websocket/upgrade-required.controller.js';
import { type ApiRoute, routesOf } from './api-doc.js';
import { DocsController } from './docs.controller.js';

export type { ApiReply, ApiRoute } from './api-doc.js';

/** Schemas given names in `components.schemas`, so replies and bodies reference them. */
export const NAMED_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  AcquireBody: AcquireBodySchema,
  RenewBody: RenewBodySchema,
  ReleaseBody: ReleaseBodySchema,
  RejectionBody: RejectionBodySchema,
  AdmitBody: AdmitBodySchema,
  GrantReply: GrantReplySchema,
  HeldReply: HeldReplySchema,
  AlreadyHeldReply: AlreadyHeldReplySchema,
  LockDelayReply: LockDelayReplySchema,
  ExpiredReply: ExpiredReplySchema,
  NotHolderReply: NotHolderReplySchema,
  RejectionAcceptedReply: RejectionAcceptedReplySchema,
  FloorReportReply: FloorReportReplySchema,
  OkReply: OkReplySchema,
  LeasesReply: LeasesReplySchema,
  EventsReply: EventsReplySchema,
  RejectionsReply: RejectionsReplySchema,
  ReadinessReply: ReadinessReplySchema,
  KeysReply: KeysReplySchema,
  StreamFrame: StreamFrameSchema,
  CoordinatorToGateFrame: CoordinatorToGateFrameSchema,
  ErrorReply: ErrorReplySchema,
  WhoAmIReply: WhoAmIReplySchema,
};

/** Every controller of the application, in the order the documentation lists them. */
export const API_CONTROLLERS: readonly Type[] = [
  LeasesController,
  GatesController,
  UpgradeRequiredController,
  EventsController,
  KeysController,
  WhoAmIController,
  HealthController,
  DocsController,
];

/** Every route the coordinator serves (the dashboard's static files aside). */
export const API_ROUTES: readonly ApiRoute[] = routesOf(API_CONTROLLERS);
