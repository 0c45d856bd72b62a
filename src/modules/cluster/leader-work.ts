// Work that must happen once per installation (the status monitor, the task scheduler, metrics
// maintenance, alert evaluation and delivery): features add their jobs here while they are set up; the
// leadership feature starts them all on a single server, or on the cluster's leader while it leads.

export interface LeaderJob {
  start(): void;
  stop(): Promise<void>;
}

export class LeaderWork implements LeaderJob {
  readonly #jobs: LeaderJob[] = [];

  add(job: LeaderJob): void {
    this.#jobs.push(job);
  }

  start(): void {
    for (const job of this.#jobs) job.start();
  }

  async stop(): Promise<void> {
    await Promise.all(this.#jobs.map((job) => job.stop()));
  }
}
