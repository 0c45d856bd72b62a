// Firmware images (signed when FIRMWARE_PUBLIC_KEY is set), update flags for agents, and the on-device
// updater's reports. Files live in a blob store: this instance's folder, or in a cluster the database
// with a local cache, into which an instance copies the files it held alone when it starts.
import path from 'node:path';
import { serverFeature } from '../../apps/server/server-feature.js';
import { BlobStore } from './blob-store.js';
import { parsePublicKey } from './firmware-signature.js';
import { firmwareRoutes } from './firmware.routes.js';
import { FirmwareService } from './firmware.service.js';
import { SharedBlobStore } from './shared-blob-store.js';
import { UpdateFlags } from './update-flag.js';
import { updateFlagRoutes } from './update-flag.routes.js';
import { UpdaterReports } from './updater-report.js';
import { updaterReportRoutes } from './updater-report.routes.js';

declare module '../../apps/server/server-feature.js' {
  interface ServerParts {
    blobs: BlobStore | SharedBlobStore;
    firmware: FirmwareService;
    updates: UpdateFlags;
  }
}

export const firmwareFeature = serverFeature({
  name: 'firmware',
  needs: ['agents', 'settings'],
  setup({ db, clock, logger, config, agents, settings }) {
    const blobDir = path.join(config.dataDir, 'blobs');
    const blobs = config.cluster ? new SharedBlobStore(db.db, blobDir, logger) : new BlobStore(blobDir);
    const key = config.firmwarePublicKey ? parsePublicKey(config.firmwarePublicKey) : null;
    const firmware = new FirmwareService(db.db, blobs, clock, config.firmwareMaxBytes, key);
    const updates = new UpdateFlags(db.db, agents, firmware, settings, clock);
    return {
      provides: { blobs, firmware, updates },
      async routes(api) {
        await api.register(firmwareRoutes, { firmware, maxBytes: config.firmwareMaxBytes });
        await api.register(updateFlagRoutes, { flags: updates });
        await api.register(updaterReportRoutes, { reports: new UpdaterReports(db.db, agents, clock) });
      },
      async start() {
        if (!(blobs instanceof SharedBlobStore)) return;
        const { imported, missing } = await blobs.importLocal();
        if (imported > 0) logger.info({ imported }, "copied this instance's firmware and installer files into the shared store");
        if (missing.length > 0) logger.warn({ missing }, 'firmware or installer files named in the database are in no store');
      },
    };
  },
});
