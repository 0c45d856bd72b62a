// Recurring tasks: five-field cron expressions in UTC (contract §10), parsed and stepped by croner
// (well kept, no dependencies) rather than by code of ours. Six- and seven-field forms (seconds,
// years) are refused: the contract says five.
import { Cron } from 'croner';

/** Why `expression` is not a usable five-field cron expression, or undefined when it is. */
export function cronProblem(expression: string): string | undefined {
  if (expression.trim().split(/\s+/).length !== 5) return 'must have exactly five fields: minute hour day-of-month month day-of-week';
  try {
    const cron = new Cron(expression, { timezone: 'UTC', paused: true });
    if (!cron.nextRun(new Date())) return 'never matches a future time';
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  return undefined;
}

/** The first time after `after` the expression matches (UTC), or null when there is none. */
export function nextCronRun(expression: string, after: Date): Date | null {
  return new Cron(expression, { timezone: 'UTC', paused: true }).nextRun(after);
}
