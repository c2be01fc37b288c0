/**
 * Writable views of the {@link ViewState} types, for the fold and its clone only.
 * Everything else sees the readonly types.
 *
 * @internal
 */
import type { CoordinatorEventType } from '@lease-fence/protocol';
import type {
  Anomaly,
  CarriedAcross,
  Generation,
  HandoverView,
  Lane,
  MissingRejectionsView,
  RejectionView,
  RestartView,
  ViewState,
} from './view-state.js';

type Writable<T> = { -readonly [K in keyof T]: T[K] };

/** @internal A generation the fold may still change (only while it is open). */
export interface MutableGeneration extends Writable<
  Omit<Generation, 'renewalPositions' | 'renewalWallMillis' | 'carried'>
> {
  renewalPositions: number[];
  renewalWallMillis: number[];
  carried: CarriedAcross[];
}

/** @internal */
export interface MutableLane extends Writable<Omit<Lane, 'generations' | 'rejections' | 'handovers'>> {
  generations: MutableGeneration[];
  rejections: RejectionView[];
  handovers: MutableHandover[];
}

/** @internal */
export type MutableHandover = Writable<HandoverView>;

/** @internal */
export interface MutableViewState extends Writable<
  Omit<ViewState, 'lanes' | 'rejections' | 'missingRejections' | 'restarts' | 'counts' | 'anomalies'>
> {
  lanes: Map<string, MutableLane>;
  rejections: RejectionView[];
  missingRejections: MissingRejectionsView[];
  restarts: RestartView[];
  counts: Record<CoordinatorEventType, number>;
  anomalies: Anomaly[];
}
