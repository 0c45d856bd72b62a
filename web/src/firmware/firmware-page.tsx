// Firmware: the agent binaries stored per platform, uploading a new one, asking agents to update to
// the latest, and the Windows installer package.
import { api } from '../api/client';
import { ErrorBanner, Loading } from '../ui/widgets';
import { useResource } from '../use-resource';
import { AgentUpdates } from './agent-updates';
import { FirmwareList } from './firmware-list';
import type { Firmware } from './firmware-types';
import { InstallerSection } from './installer-section';
import { FirmwareUploadForm } from './upload-form';
import './firmware.css';
import { Allowed } from '../auth/access';

export function FirmwarePage() {
  const firmware = useResource((signal) => api<Firmware[]>('/firmware', { signal }), []);
  return (
    <section className="firmware-page">
      <h1>Firmware {firmware.data && <span className="muted">({firmware.data.length})</span>}</h1>
      <ErrorBanner error={firmware.error} />
      {firmware.data ? <FirmwareList firmware={firmware.data} onChanged={firmware.reload} /> : !firmware.error && <Loading />}
      {/* Firmware is installed by every customer's devices: uploading it is server-wide. */}
      <Allowed need="server-wide">
        <FirmwareUploadForm onUploaded={firmware.reload} />
      </Allowed>
      <AgentUpdates firmware={firmware.data ?? []} />
      <InstallerSection />
    </section>
  );
}
