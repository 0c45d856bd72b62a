// A service's row buttons: start when it is not running, stop (after a confirmation: a stopped service
// may be what the technician reaches the machine through) and restart when it runs.
import { useState } from 'react';
import { ConfirmButton } from '../../ui/widgets';
import type { DeviceService, ServiceAction } from '../device/device-types';

export function ServiceButtons({ service, run }: { service: DeviceService; run: (action: ServiceAction) => Promise<void> }) {
  const [busy, setBusy] = useState<ServiceAction>();
  const press = async (action: ServiceAction) => {
    setBusy(action);
    try {
      await run(action);
    } finally {
      setBusy(undefined);
    }
  };
  const running = service.state === 'running' || service.state === 'starting';
  return (
    <span className="confirm">
      {!running && (
        <button type="button" disabled={busy !== undefined} onClick={() => void press('start')} aria-label={`Start ${service.name}`}>
          {busy === 'start' ? 'Starting…' : 'Start'}
        </button>
      )}
      {service.state !== 'stopped' && <ConfirmButton label="Stop" question={`Stop ${service.name}?`} busyLabel="Stopping…" onConfirm={() => press('stop')} />}
      <button type="button" disabled={busy !== undefined} onClick={() => void press('restart')} aria-label={`Restart ${service.name}`}>
        {busy === 'restart' ? 'Restarting…' : 'Restart'}
      </button>
    </span>
  );
}
