// /console/alerts: newest first, live, filters, pages; the detail shows the
// Telegram message as Telegram would, the enrichment and the timeline.
import { useEffect, useRef, useState } from "preact/hooks";
import {
  api,
  ApiError,
  call,
  events,
  toError,
  type Alert,
  type AlertStatus,
  type Message,
  type Schemas,
} from "../api/client";
import { maxDelay, minDelay, useLive } from "../live";
import { AlertGroups } from "./groups";
import { TelegramMessage } from "../telegram";
import { Chip, Empty, ErrorBox, Field, Link, Loading, when } from "../ui";

type WatchEvent = Schemas["v1WatchAlertsResponse"];

const statuses: AlertStatus[] = ["RECEIVED", "ENRICHING", "DELIVERING", "DELIVERED", "FAILED", "DUPLICATE"];
const pageSize = 50;

/** labelMatch says whether an alert carries the label filter "key=value" (or "key"). */
function labelMatch(a: Alert, filter: string): boolean {
  if (!filter) return true;
  const [k, v] = filter.split("=", 2).map((s) => s.trim());
  const md = (a.metadata ?? {}) as Record<string, unknown>;
  const labels = (md.labels ?? md) as Record<string, unknown>;
  if (!k || !(k in labels)) return false;
  return v === undefined || String(labels[k]) === v;
}

export function AlertsPage() {
  const [status, setStatus] = useState<AlertStatus | "">("");
  const [source, setSource] = useState("");
  const [label, setLabel] = useState("");
  const [first, setFirst] = useState<Alert[] | null>(null);
  const [older, setOlder] = useState<Alert[]>([]);
  const [token, setToken] = useState("");
  const [error, setError] = useState<unknown>(null);

  const [live, setLive] = useState<"connecting" | "stream" | "rereading">("connecting");
  const olderShown = useRef(false);
  olderShown.current = older.length > 0;

  // The first page is live through the WatchAlerts stream (SSE): the watch
  // opens first (its headers come once the server listens), then the first
  // page is read, so no change falls between the two; each change then
  // replaces its alert or adds a new one on top. Only when the stream fails
  // does the page re-read the first page instead, retrying the stream with
  // a backoff (1 s doubling to 8 s).
  useEffect(() => {
    const ctl = new AbortController();
    const signal = ctl.signal;
    const reload = async () => {
      const r = await call(
        api.GET("/v1/alerts", { params: { query: { pageSize, status: status || undefined } }, signal }),
      );
      setFirst((cur) => mergeList(r.alerts ?? [], cur ?? []));
      // Once older pages are shown, their token moves on with them.
      if (!olderShown.current) setToken(r.nextPageToken ?? "");
      setError(null);
    };
    const watch = async () => {
      const r = await api.GET("/v1/alerts:watch", {
        params: { query: { status: status || undefined } },
        headers: { Accept: "text/event-stream" },
        parseAs: "stream",
        signal,
      });
      if (!r.response.ok) throw toError(r.response.status, r.error);
      await reload();
      setLive("stream");
      for await (const ev of events<WatchEvent>(r.data ?? null)) {
        const a = ev.alert;
        if (a?.id) {
          setFirst((cur) => upsert(cur ?? [], a));
          setOlder((o) => o.map((x) => (x.id === a.id && newer(a, x) ? a : x)));
        }
      }
    };
    (async () => {
      let delay = minDelay;
      while (!signal.aborted) {
        try {
          await watch();
          // A stream the server ends (it should not) is opened again,
          // never in a tight loop.
          delay = minDelay;
          await sleep(delay, signal);
        } catch (e) {
          if (signal.aborted) return;
          setLive("rereading");
          try {
            await reload();
          } catch (e2) {
            setError(e2);
          }
          // A refused watch (a bad filter, a missing scope) is shown; one
          // over the gateway's streams-per-client limit (429) or a lost
          // connection only leaves the page re-reading.
          if (e instanceof ApiError && (e.httpStatus === 400 || e.httpStatus === 403)) setError(e);
          await sleep(delay, signal);
          delay = Math.min(delay * 2, maxDelay);
        }
      }
    })();
    return () => ctl.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [status]);
  useEffect(() => {
    setOlder([]);
    setFirst(null);
    setLive("connecting");
  }, [status]);

  const more = async () => {
    try {
      const r = await call(
        api.GET("/v1/alerts", { params: { query: { pageSize, pageToken: token, status: status || undefined } } }),
      );
      setOlder((o) => [...o, ...(r.alerts ?? [])]);
      setToken(r.nextPageToken ?? "");
    } catch (e) {
      setError(e);
    }
  };

  const seen = new Set<string>();
  const all = [...(first ?? []), ...older].filter((a) => {
    if (!a.id || seen.has(a.id)) return false;
    seen.add(a.id);
    return (!source || a.source === source) && labelMatch(a, label);
  });
  const sources = [...new Set([...(first ?? []), ...older].map((a) => a.source).filter(Boolean))] as string[];

  return (
    <section aria-labelledby="h-alerts" data-live={live}>
      <h1 id="h-alerts">Alerts</h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter alerts">
        <Field label="Status" name="status">
          {(id) => (
            <select id={id} value={status} onChange={(e) => setStatus(e.currentTarget.value as AlertStatus | "")}>
              <option value="">Any</option>
              {statuses.map((s) => (
                <option value={s}>{s}</option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Source" name="source">
          {(id) => (
            <select id={id} value={source} onChange={(e) => setSource(e.currentTarget.value)}>
              <option value="">Any</option>
              {sources.map((s) => (
                <option value={s}>{s}</option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Label" name="label" hint="key or key=value">
          {(id, _, d) => (
            <input id={id} aria-describedby={d} value={label} onInput={(e) => setLabel(e.currentTarget.value)} />
          )}
        </Field>
      </form>
      <AlertGroups />
      <h2>Recent alerts</h2>
      <ErrorBox error={error} />
      {first === null && !error ? (
        <Loading />
      ) : all.length === 0 ? (
        <Empty title="No alerts yet.">
          <p>
            Post one: <code>curl -X POST localhost:8080/v1/alerts -d '{`{"text":"disk full on db-1"}`}'</code>, or
            point Alertmanager at <code>/v1/alerts:alertmanager</code>.
          </p>
        </Empty>
      ) : (
        <>
          <p class="muted" aria-live="polite">
            {all.length} shown, newest first;{" "}
            {live === "rereading" ? "the live stream is unavailable, re-reading." : "updates live."}
          </p>
          <ul class="rows" id="alert-list">
            {all.map((a) => (
              <li key={a.id} data-alert-id={a.id} data-status={a.status}>
                <Link href={`/console/alerts/${a.id}`}>
                  <Chip value={a.status} /> <span class="row-title">{firstLine(a.text)}</span>
                  <span class="muted">
                    {a.source} · {when(a.receivedAt)}
                  </span>
                </Link>
              </li>
            ))}
          </ul>
          {token && (
            <button type="button" onClick={more}>
              Older alerts
            </button>
          )}
        </>
      )}
    </section>
  );
}

/** newer says whether a is a later state of the same alert than b. */
function newer(a: Alert, b: Alert): boolean {
  return ts(a.updateTime) >= ts(b.updateTime);
}

/**
 * ts makes RFC 3339 times (protojson writes 0, 3, 6 or 9 fraction digits)
 * compare as strings: the fraction padded to nine digits.
 */
function ts(s?: string): string {
  if (!s) return "";
  const m = /^(.*?)(?:\.(\d+))?Z$/.exec(s);
  return m ? `${m[1]}.${(m[2] ?? "").padEnd(9, "0")}` : s;
}

/** upsert puts a changed alert in the list: in place when listed, else on top by receivedAt. */
function upsert(list: Alert[], a: Alert): Alert[] {
  const i = list.findIndex((x) => x.id === a.id);
  if (i >= 0) {
    if (!newer(a, list[i]!)) return list;
    const out = list.slice();
    out[i] = a;
    return out;
  }
  const out = [a, ...list];
  out.sort((x, y) => cmp(ts(y.receivedAt), ts(x.receivedAt)) || cmp(y.id ?? "", x.id ?? ""));
  return out;
}

/** mergeList takes a freshly read first page, keeping newer streamed states and streamed alerts above it. */
function mergeList(page: Alert[], cur: Alert[]): Alert[] {
  let out = page;
  for (const a of cur) out = upsert(out, a);
  // Streamed alerts older than the page's last belong to later pages.
  const last = page[page.length - 1]?.receivedAt;
  return page.length < pageSize || !last ? out : out.filter((a) => ts(a.receivedAt) >= ts(last));
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(t);
      resolve();
    });
  });
}

function firstLine(s?: string): string {
  return (s ?? "").split("\n", 1)[0] ?? "";
}

export function AlertDetail({ id }: { id: string }) {
  const [alert, setAlert] = useState<Alert | null>(null);
  const [msg, setMsg] = useState<Message | null>(null);
  const [error, setError] = useState<unknown>(null);
  useLive(
    async (signal) => {
      try {
        const r = await call(api.GET("/v1/alerts/{id}", { params: { path: { id } }, signal }));
        setAlert(r.alert ?? null);
        setError(null);
        return [r.alert?.status, r.alert?.updateTime];
      } catch (e) {
        setError(e);
        throw e;
      }
    },
    [id],
  );
  const gid = alert?.groundingMessageId;
  useEffect(() => {
    if (!gid) return;
    call(api.GET("/v1/messages/{id}", { params: { path: { id: gid } } }))
      .then((m) => setMsg(m))
      .catch(() => setMsg(null));
  }, [gid]);

  if (error) return <ErrorBox error={error} />;
  if (!alert) return <Loading />;
  const timeline: [string, string | undefined][] = [
    ["Received", alert.receivedAt],
    ["Last change", alert.updateTime],
    ["Delivered", alert.deliverTime],
  ];
  return (
    <section aria-labelledby="h-alert">
      <p>
        <Link href="/console/alerts">← Alerts</Link>
      </p>
      <h1 id="h-alert">
        Alert <Chip value={alert.status} />
      </h1>
      <dl class="facts">
        <dt>Source</dt>
        <dd>{alert.source || "—"}</dd>
        <dt>Attempts</dt>
        <dd>{alert.attempts ?? 0}</dd>
        <dt>Destination</dt>
        <dd>{alert.destination || "—"}</dd>
        {alert.error && (
          <>
            <dt>Error</dt>
            <dd class="bad">{alert.error}</dd>
          </>
        )}
        {alert.enrichmentError && (
          <>
            <dt>Enrichment</dt>
            <dd class="bad">{alert.enrichmentError}</dd>
          </>
        )}
        {alert.groupId && (
          <>
            <dt>Group</dt>
            <dd>
              <Link href={`/console/groups/${alert.groupId}`}>
                <span id="alert-group-link">the alert group it was delivered in</span>
              </Link>
            </dd>
          </>
        )}
        {alert.duplicateOf && (
          <>
            <dt>Duplicate of</dt>
            <dd>
              <Link href={`/console/alerts/${alert.duplicateOf}`}>{alert.duplicateOf}</Link>
            </dd>
          </>
        )}
      </dl>
      <h2>Timeline</h2>
      <ol class="timeline">
        {timeline
          .filter(([, t]) => t)
          .map(([k, t]) => (
            <li>
              {k}: <time dateTime={t}>{when(t)}</time>
            </li>
          ))}
      </ol>
      <h2>Telegram message</h2>
      {alert.message?.text ? (
        <TelegramMessage text={alert.message.text} parseMode={alert.message.parseMode} />
      ) : (
        <p class="muted">Not rendered yet.</p>
      )}
      <h2>Enrichment</h2>
      {msg ? (
        <div>
          <p>{msg.summary}</p>
          <ul>
            {(msg.citations ?? []).map((c) => (
              <li>
                <a href={c.url} rel="noopener noreferrer" target="_blank">
                  {c.title || c.url}
                </a>{" "}
                <span class="muted">{c.domain}</span>
              </li>
            ))}
          </ul>
          <Link href={`/console/messages/${msg.id}`}>Audit record</Link>
        </div>
      ) : (
        <p class="muted">{gid ? "Loading…" : "No enrichment recorded for this alert."}</p>
      )}
      <h2>Original text</h2>
      <pre class="wrap">{alert.text}</pre>
    </section>
  );
}
