// A check's state as a badge; "pending" before its first result (state null).
import { Badge } from '../ui/widgets';
import { STATE_TONES, type CheckState } from './check-types';

export function CheckStateBadge({ state }: { state: CheckState | null }) {
  if (state === null) return <Badge tone="muted">pending</Badge>;
  return <Badge tone={STATE_TONES[state]}>{state}</Badge>;
}
