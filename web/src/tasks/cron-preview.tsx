// The live preview under the cron input: the next five runs in the user's time and in UTC (the server
// reads the expression in UTC, which is easy to forget), or why the expression is refused. The check is
// the server's own (src/modules/tasks/cron.ts) with the same croner package, so the preview accepts
// exactly what the server accepts and a refused task never looks fine here.
import { Cron } from 'croner';
import { useEffect, useState } from 'react';
import './tasks.css';

const PREVIEW_RUNS = 5;

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

/** The next `count` runs of a valid expression (UTC). */
export function nextCronRuns(expression: string, count: number): Date[] {
  return new Cron(expression, { timezone: 'UTC', paused: true }).nextRuns(count);
}

const LOCAL_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;
const WHEN: Intl.DateTimeFormatOptions = { weekday: 'short', year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' };
const localFormat = new Intl.DateTimeFormat(undefined, WHEN);
const utcFormat = new Intl.DateTimeFormat(undefined, { ...WHEN, timeZone: 'UTC' });

export function CronPreview({ expression }: { expression: string }) {
  // Re-computed every half minute, so a form left open does not list runs that have passed.
  const [, setTick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setTick((t) => t + 1), 30_000);
    return () => clearInterval(timer);
  }, []);

  const trimmed = expression.trim();
  let body;
  if (!trimmed) {
    body = <span className="muted">Five fields, in UTC: minute hour day-of-month month day-of-week, e.g. <code>0 3 * * 1</code> for Mondays at 03:00 UTC.</span>;
  } else {
    const problem = cronProblem(trimmed);
    body = problem ? (
      <span className="invalid" role="alert">
        Invalid cron expression: {problem}
      </span>
    ) : (
      <>
        <span>
          Next {PREVIEW_RUNS} runs, in your time ({LOCAL_ZONE}) and in UTC:
        </span>
        <ol>
          {nextCronRuns(trimmed, PREVIEW_RUNS).map((date) => (
            <li key={date.getTime()} data-testid="cron-next-run">
              <time dateTime={date.toISOString()}>{localFormat.format(date)}</time> <span className="muted">— {utcFormat.format(date)} UTC</span>
            </li>
          ))}
        </ol>
      </>
    );
  }
  return (
    <div className="cron-preview" data-testid="cron-preview" aria-live="polite">
      {body}
    </div>
  );
}
