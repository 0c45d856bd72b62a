// Row types of the shared blob tables (migrations/0015_shared_blobs.ts), written only in cluster mode.
import type { ColumnType } from 'kysely';

export interface BlobChunksTable {
  sha256: string;
  /** 0, 1, 2 …: the chunk's place in the blob; every chunk but the last is exactly 1 MiB. */
  seq: number;
  /** pg returns a Buffer, PGlite a Uint8Array: read it as the latter. */
  data: ColumnType<Uint8Array, Uint8Array, never>;
}

/** A complete blob: written after its chunks, in the same transaction. */
export interface BlobsTable {
  sha256: string;
  size: number;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}
