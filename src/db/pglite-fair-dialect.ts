// Kysely's PGlite dialect, with a first-come first-served queue for PGlite's one connection.
//
// Kysely guards a driver with one connection by a mutex whose waiters all await the same promise: each
// release wakes every waiter, one of them takes the connection and all the others wait again. With n
// statements waiting, each one costs n wake-ups, a burst of n costs n². In fleet-scale's start-up burst
// on a slow machine (2026-11-27, two shared cores) a thousand requests queued on it, and in a tick profile
// of the server, which had all but stopped connecting agents, `obtainLock` was the hottest JavaScript
// function (8.4 %) with most unattributed ticks under it and `releaseConnection`. (That stall has
// another cause too, not found yet: bench/README.md.) Here each release hands the connection to the
// next in line only.
import { PGliteAdapter, PGliteDialect, type DatabaseConnection, type Driver, type TransactionSettings } from 'kysely';

/** Waiters in arrival order; release passes the connection straight to the oldest. */
class FairLock {
  #held = false;
  #waiting: Array<() => void> = [];
  #head = 0;

  acquire(): Promise<void> {
    if (!this.#held) {
      this.#held = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  release(): void {
    const next = this.#waiting[this.#head];
    if (next === undefined) {
      this.#held = false;
      return;
    }
    this.#waiting[this.#head++] = undefined as never;
    // Drop the served part of the array now and then, not on every release (shift is O(n)).
    if (this.#head > 1024 && this.#head * 2 > this.#waiting.length) {
      this.#waiting = this.#waiting.slice(this.#head);
      this.#head = 0;
    }
    next();
  }
}

/** The PGlite driver behind the fair lock (Kysely's own mutex is off: see the adapter below). */
class FairDriver implements Driver {
  readonly #lock = new FairLock();

  constructor(private readonly inner: Driver) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.#lock.acquire();
    try {
      return await this.inner.acquireConnection();
    } catch (err) {
      this.#lock.release();
      throw err;
    }
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    try {
      await this.inner.releaseConnection(connection);
    } finally {
      this.#lock.release();
    }
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(connection, settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(connection);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(connection);
  }

  savepoint: Driver['savepoint'] = (...args) => this.inner.savepoint!(...args);
  rollbackToSavepoint: Driver['rollbackToSavepoint'] = (...args) => this.inner.rollbackToSavepoint!(...args);
  releaseSavepoint: Driver['releaseSavepoint'] = (...args) => this.inner.releaseSavepoint!(...args);

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

/** Tells Kysely not to add its own mutex: the driver queues its callers itself. */
class SelfQueuingAdapter extends PGliteAdapter {
  override get supportsMultipleConnections(): boolean {
    return true;
  }
}

export class FairPGliteDialect extends PGliteDialect {
  override createAdapter(): PGliteAdapter {
    return new SelfQueuingAdapter();
  }

  override createDriver(): Driver {
    return new FairDriver(super.createDriver());
  }
}
