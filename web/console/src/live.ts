// Live data without a server stream: the alerts and approvals pages re-read
// their first page while the tab is visible, soon after a change and less
// often while nothing changes (1 s doubling to 8 s), and at once when the
// tab becomes visible again. Hidden tabs make no calls.
import { useEffect, useRef } from "preact/hooks";

export const minDelay = 1000;
export const maxDelay = 8000;

/**
 * useLive runs load now and again until unmount; load resolves to a value
 * whose change (compared as JSON) means "something happened".
 */
export function useLive(load: (signal: AbortSignal) => Promise<unknown>, deps: unknown[]) {
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    const ctl = new AbortController();
    let delay = minDelay;
    let last = "";
    let timer: ReturnType<typeof setTimeout> | undefined;
    let running = false;
    const tick = async () => {
      timer = undefined;
      if (document.hidden || running) return;
      running = true;
      try {
        const v = JSON.stringify(await loadRef.current(ctl.signal));
        delay = v !== last ? minDelay : Math.min(delay * 2, maxDelay);
        last = v;
      } catch {
        delay = maxDelay;
      } finally {
        running = false;
      }
      if (!ctl.signal.aborted) timer = setTimeout(tick, delay);
    };
    const wake = () => {
      if (document.hidden) return;
      delay = minDelay;
      if (timer) clearTimeout(timer);
      void tick();
    };
    document.addEventListener("visibilitychange", wake);
    void tick();
    return () => {
      ctl.abort();
      if (timer) clearTimeout(timer);
      document.removeEventListener("visibilitychange", wake);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
}
