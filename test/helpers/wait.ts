/**
 * Waiting on a condition with a deadline, for tests that must poll what they cannot subscribe to (a
 * row in another process's table, another process's HTTP answer). One helper for every such wait.
 */

/**
 * Resolves with cond()'s first truthy value, polled every `everyMs` and, when `wake` is given, also
 * whenever one of its functions is called (e.g. on each component event's NOTIFY); rejects at the
 * deadline with `detail()`. A wake that comes while cond() runs checks again once it ends.
 */
export function waitFor<T>(
  cond: () => Promise<T | undefined | false | null>,
  what: string,
  timeoutMs: number,
  detail: () => string = () => '',
  everyMs = 200,
  wake?: Set<() => void>,
): Promise<T> {
  return new Promise((resolve, reject) => {
    let busy = false;
    let again = false;
    const check = async () => {
      if (busy) {
        again = true;
        return;
      }
      busy = true;
      try {
        do {
          again = false;
          const v = await cond();
          if (v) {
            finish();
            resolve(v);
            return;
          }
        } while (again);
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
      wake?.delete(check);
    };
    wake?.add(check);
    void check();
  });
}
