/**
 * Waiting on a condition with a deadline, for tests that must poll what they cannot subscribe to (a
 * row in another process's table, another process's HTTP answer). One helper for every such wait.
 */

/** Resolves with cond()'s first truthy value, polled every `everyMs`; rejects at the deadline with `detail()`. */
export function waitFor<T>(
  cond: () => Promise<T | undefined | false | null>,
  what: string,
  timeoutMs: number,
  detail: () => string = () => '',
  everyMs = 200,
): Promise<T> {
  return new Promise((resolve, reject) => {
    let busy = false;
    const check = async () => {
      if (busy) return;
      busy = true;
      try {
        const v = await cond();
        if (v) {
          finish();
          resolve(v);
        }
      } catch (e) {
        finish();
        reject(e);
      } finally {
        busy = false;
      }
    };
    const tick = setInterval(check, everyMs);
    const deadline = setTimeout(() => {
      finish();
      reject(new Error(`${what}: not reached within ${timeoutMs} ms\n${detail()}`));
    }, timeoutMs);
    const finish = () => {
      clearInterval(tick);
      clearTimeout(deadline);
    };
    void check();
  });
}
