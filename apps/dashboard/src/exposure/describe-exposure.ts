/**
 * The sentence the lease details give about a generation's exposure window, e.g.
 * `exposed 340 ms (grant → gate admit at 12:01:03.460Z wall, position 812)`.
 */
import { formatDuration, formatWallTime, type Generation } from '@lease-fence/dashboard-model';

const EVIDENCE_TEXT = {
  admitted: 'gate admit',
  rejected: 'gate refusal of an older fence',
  'floor-reported': 'gate floor report',
} as const;

/**
 * Describes `g`'s exposure window (see `ExposureView` in `@lease-fence/dashboard-model`).
 *
 * @param g - A generation of the view state.
 * @returns The sentence, or undefined when its grant was not a handover (a resource's first grant,
 *   or a grant that is not loaded).
 */
export function describeExposure(g: Generation): string | undefined {
  const e = g.exposure;
  if (e === undefined) return undefined;
  switch (e.status) {
    case 'open':
      return `exposure open: no gate evidence yet that the floor reached fence ${g.fence} (an older holder's write would still be admitted)`;
    case 'unknown':
      return `exposure unknown: the generation ended with no gate evidence that the floor reached fence ${g.fence} (no gate reports for this resource?)`;
    case 'closed': {
      const duration = formatDuration(e.durationMillis ?? Number.NaN);
      if (e.evidence === undefined || e.evidence.position === g.granted?.position) {
        return e.fenceFirst
          ? `exposed ${duration} (fence-first: a gate admitted fence ${g.fence} before the grant)`
          : `exposed ${duration} (the gate's floor was already at fence ${g.fence} at the grant)`;
      }
      const kind = e.evidenceKind === undefined ? 'gate evidence' : EVIDENCE_TEXT[e.evidenceKind];
      return `exposed ${duration} (grant → ${kind} at ${formatWallTime(e.evidence.wallMillis)} wall, position ${e.evidence.position}${e.gateId === undefined ? '' : `, gate ${e.gateId}`})`;
    }
  }
}
