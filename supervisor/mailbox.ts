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
    if (this.running) {
      this.queue.push(message);
      return;
    }
    this.running = true;
    try {
      // Handled at once, not queued: most posts (a worker's every line) find the mailbox
      // idle, and a push then emptying the queue would shrink and regrow it each time.
      this.dispatch(message);
      while (this.head < this.queue.length) this.dispatch(this.queue[this.head++]);
    } finally {
      if (this.queue.length > 0) this.queue.length = 0;
      this.head = 0;
      this.running = false;
    }
  }

  private dispatch(message: M): void {
    try {
      this.handle(message);
    } catch (err) {
      this.onError(err, message);
    }
  }
}
