/**
 * An actor's mailbox: messages are handled one at a time, in order, each to
 * completion. Handlers are synchronous on purpose; long work (a teardown, a
 * backoff wait) runs outside and posts its result back as a new message.
 */

/** Serial message queue around one handler. */
export class Mailbox<M> {
  private readonly queue: M[] = [];
  private head = 0;
  private running = false;

  constructor(
    private readonly handle: (message: M) => void,
    private readonly onError: (err: unknown, message: M) => void,
  ) {}

  /** Enqueue; when nothing is running the message is handled before `post` returns. */
  post(message: M): void {
    this.queue.push(message);
    if (this.running) return;
    this.running = true;
    try {
      while (this.head < this.queue.length) {
        const next = this.queue[this.head++];
        try {
          this.handle(next);
        } catch (err) {
          this.onError(err, next);
        }
      }
    } finally {
      this.queue.length = 0;
      this.head = 0;
      this.running = false;
    }
  }
}
