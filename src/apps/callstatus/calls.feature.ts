// What the phone system and the time-tracking system call (plain URLs, no credentials).
import { AttendanceService } from './attendance.js';
import { CallEvents } from './call-events.js';
import { callstatusFeature } from './callstatus-feature.js';
import { publicRoutes } from './public.routes.js';

export const callsFeature = callstatusFeature({
  name: 'calls',
  needs: ['lights', 'metrics'],
  setup: ({ db, clock, lights, metrics }) => ({
    rootRoutes: (app) => app.register(publicRoutes, { calls: new CallEvents(db.db, lights, clock, metrics), attendance: new AttendanceService(db.db, clock) }),
  }),
});
